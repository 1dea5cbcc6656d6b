package bench

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// bencode encodes strings, integers, lists and string-keyed dictionaries
// (keys sorted, as the format requires): the body of an rtpengine ng
// control message.
func bencode(v any) []byte {
	var b bytes.Buffer
	var enc func(any)
	enc = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(strconv.Itoa(len(v)) + ":" + v)
		case int:
			b.WriteString("i" + strconv.Itoa(v) + "e")
		case []any:
			b.WriteByte('l')
			for _, e := range v {
				enc(e)
			}
			b.WriteByte('e')
		case map[string]any:
			b.WriteByte('d')
			for _, k := range slices.Sorted(maps.Keys(v)) {
				enc(k)
				enc(v[k])
			}
			b.WriteByte('e')
		default:
			panic(fmt.Sprintf("bencode: %T", v))
		}
	}
	enc(v)
	return b.Bytes()
}

// bdecode decodes one bencoded value (strings as string, integers as
// int, lists as []any, dictionaries as map[string]any) and returns what
// follows it.
func bdecode(b []byte) (any, []byte, error) {
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("bencode: unexpected end")
	}
	switch c := b[0]; {
	case c == 'i':
		end := bytes.IndexByte(b, 'e')
		if end < 0 {
			return nil, nil, fmt.Errorf("bencode: unterminated integer")
		}
		n, err := strconv.Atoi(string(b[1:end]))
		return n, b[end+1:], err
	case c == 'l' || c == 'd':
		var list []any
		rest := b[1:]
		for len(rest) > 0 && rest[0] != 'e' {
			var v any
			var err error
			if v, rest, err = bdecode(rest); err != nil {
				return nil, nil, err
			}
			list = append(list, v)
		}
		if len(rest) == 0 {
			return nil, nil, fmt.Errorf("bencode: unterminated list or dictionary")
		}
		if c == 'l' {
			return list, rest[1:], nil
		}
		if len(list)%2 != 0 {
			return nil, nil, fmt.Errorf("bencode: dictionary with a key and no value")
		}
		d := map[string]any{}
		for i := 0; i < len(list); i += 2 {
			k, ok := list[i].(string)
			if !ok {
				return nil, nil, fmt.Errorf("bencode: dictionary key %v is not a string", list[i])
			}
			d[k] = list[i+1]
		}
		return d, rest[1:], nil
	case c >= '0' && c <= '9':
		colon := bytes.IndexByte(b, ':')
		if colon < 0 {
			return nil, nil, fmt.Errorf("bencode: string without a length")
		}
		n, err := strconv.Atoi(string(b[:colon]))
		if err != nil || n < 0 || colon+1+n > len(b) {
			return nil, nil, fmt.Errorf("bencode: bad string length %q", b[:colon])
		}
		return string(b[colon+1 : colon+1+n]), b[colon+1+n:], nil
	}
	return nil, nil, fmt.Errorf("bencode: unexpected %q", b[0])
}
