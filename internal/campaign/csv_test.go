package campaign

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parley-voice/parley/internal/invalid"
)

// brokenField is a field of a refused upload, as the tests compare it.
type csvBroken struct {
	Line  int
	Field string
}

func refusedCSV(t *testing.T, body string) []csvBroken {
	t.Helper()
	b, err := ParseCSV(strings.NewReader(body))
	if err == nil {
		t.Fatalf("accepted %q: %+v", body, b)
	}
	ie, ok := err.(*invalid.Error)
	if !ok {
		t.Fatalf("error %v is %T, want *invalid.Error", err, err)
	}
	var got []csvBroken
	for _, f := range ie.Fields {
		got = append(got, csvBroken{f.Line, f.Name})
	}
	return got
}

func TestParseCSV(t *testing.T) {
	body := "\uFEFFtoNumber, first name ,timezone,note\r\n" +
		"+14155550100,Ann,America/Chicago,\"hello, world\"\r\n" +
		"\r\n" +
		" +442071234567 ,Bob,,\"two\r\nlines\"\r\n" +
		",,,\r\n" +
		"+14155550100,Dup,,\r\n" +
		"+819012345678,Chi,Asia/Tokyo,x" // no newline at the end
	b, err := ParseCSV(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if b.Duplicates != 1 || len(b.Recipients) != 3 {
		t.Fatalf("batch = %+v", b)
	}
	r := b.Recipients
	if r[0].ToNumber != "+14155550100" || *r[0].Timezone != "America/Chicago" ||
		!cmp.Equal(r[0].Variables, map[string]any{"first name": "Ann", "note": "hello, world"}) {
		t.Errorf("recipient 0 = %+v", r[0])
	}
	if r[1].ToNumber != "+442071234567" || r[1].Timezone != nil ||
		!cmp.Equal(r[1].Variables, map[string]any{"first name": "Bob", "note": "two\nlines"}) {
		t.Errorf("recipient 1 = %+v", r[1])
	}
	if r[2].ToNumber != "+819012345678" || *r[2].Timezone != "Asia/Tokyo" {
		t.Errorf("recipient 2 = %+v", r[2])
	}
	checkAcceptedBatch(t, b)
}

func TestParseCSVPhoneNumberColumn(t *testing.T) {
	b, err := ParseCSV(strings.NewReader("phone_number\n+14155550100\n"))
	if err != nil || len(b.Recipients) != 1 || b.Recipients[0].ToNumber != "+14155550100" || len(b.Recipients[0].Variables) != 0 {
		t.Fatalf("batch %+v, %v", b, err)
	}
}

func TestParseCSVRefuses(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []csvBroken
	}{
		{"empty", "", []csvBroken{{0, "body"}}},
		{"BOM only", "\uFEFF", []csvBroken{{0, "body"}}},
		{"header only", "toNumber,name\r\n", []csvBroken{{0, "body"}}},
		{"header and empty lines", "toNumber\n\n\n", []csvBroken{{0, "body"}}},
		{"no toNumber column", "number,name\n+14155550100,a\n", []csvBroken{{1, "body"}}},
		{"case matters", "ToNumber\n+14155550100\n", []csvBroken{{1, "body"}}},
		{"column twice", "toNumber,name,name\n+14155550100,a,b\n", []csvBroken{{1, "name"}}},
		{"toNumber and its alias", "toNumber,phone_number\n+14155550100,+14155550101\n", []csvBroken{{1, "phone_number"}}},
		{"empty header name", "toNumber,,x\n+14155550100,a,b\n", []csvBroken{{1, "body"}}},
		{"bad numbers and zones", "toNumber,timezone\n+14155550100,\n4155550100,\n+1 415 555 0100,Mars/Base\n\n+14155550101,Local\n",
			[]csvBroken{{3, "toNumber"}, {4, "toNumber"}, {4, "timezone"}, {6, "timezone"}}},
		{"line of a record after quoted newlines", "toNumber,note\n+14155550100,\"a\nb\nc\"\nbad,x\n", []csvBroken{{5, "toNumber"}}},
		{"too many cells", "toNumber,name\n+14155550100,a,b\n", []csvBroken{{2, "body"}}},
		{"too few cells", "toNumber,name\n+14155550100\n", []csvBroken{{2, "body"}}},
		{"bare quote", "toNumber,name\n+14155550100,a\"b\n", []csvBroken{{2, "body"}}},
		{"unclosed quote", "toNumber,name\n+14155550100,\"a\n+14155550101,b\n", []csvBroken{{2, "body"}}},
		{"invalid UTF-8", "toNumber,name\n+14155550100,ok\n+14155550101,\xff\n", []csvBroken{{3, "body"}}},
		{"overlong UTF-8", "toNumber,name\n+14155550100,\xc0\x80\n", []csvBroken{{2, "body"}}},
		{"NUL", "toNumber,name\n+14155550100,a\x00\n", []csvBroken{{2, "body"}}},
		{"NUL in the header", "toNumber,na\x00me\n+14155550100,a\n", []csvBroken{{1, "body"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := refusedCSV(t, c.body); !cmp.Equal(got, c.want) {
				t.Errorf("broken %+v, want %+v", got, c.want)
			}
		})
	}
}

// The line of a record is the file's physical line, header 1, counting
// empty lines and the lines inside quoted cells; empty lines before the
// header leave the header on its own line.
func TestParseCSVLinesBeforeHeader(t *testing.T) {
	got := refusedCSV(t, "\n\ntoNumber\n+14155550100\nx\n")
	if want := []csvBroken{{5, "toNumber"}}; !cmp.Equal(got, want) {
		t.Errorf("broken %+v, want %+v", got, want)
	}
}

func TestParseCSVCapsDetails(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("toNumber,timezone\n")
	for range 300 {
		sb.WriteString("bad,Mars/Base\n") // two broken fields a line
	}
	b, err := ParseCSV(strings.NewReader(sb.String()))
	if err == nil {
		t.Fatalf("accepted: %+v", b)
	}
	f := err.(*invalid.Error).Fields
	if len(f) != 101 || f[99].Line != 51 || f[100].Name != "body" || f[100].Line != 0 {
		t.Fatalf("%d fields, 100th %+v, last %+v", len(f), f[99], f[len(f)-1])
	}
	// Lines 2–51 are named (100 fields); lines 52–301 are left out.
	if !strings.Contains(f[100].Message, "250 more lines") {
		t.Errorf("summary = %q", f[100].Message)
	}
}

// rowsReader yields a header and then numbered rows without end, counting
// how much was read: the parser must stop soon after the limit.
type endlessRows struct {
	readHeader string
	row        int
	buf        []byte
	read       int64
}

func (r *endlessRows) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.readHeader != "" {
			r.buf, r.readHeader = []byte(r.readHeader), ""
		} else {
			r.buf = fmt.Appendf(nil, "+1415%07d\n", r.row)
			r.row++
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	r.read += int64(n)
	return n, nil
}

func TestParseCSVRowLimit(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("toNumber\n")
	for i := range MaxCSVRows {
		fmt.Fprintf(&sb, "+1415%07d\n", i)
	}
	b, err := ParseCSV(strings.NewReader(sb.String()))
	if err != nil || len(b.Recipients) != MaxCSVRows {
		t.Fatalf("100,000 rows: %v", err)
	}
	r := &endlessRows{readHeader: "toNumber\n"}
	_, err = ParseCSV(r)
	f := err.(*invalid.Error).Fields
	if len(f) != 1 || f[0].Name != "body" || f[0].Line != MaxCSVRows+2 || !strings.Contains(f[0].Message, "100000") {
		t.Fatalf("fields %+v", f)
	}
	if r.row > MaxCSVRows+10_000 {
		t.Errorf("read %d rows past the limit", r.row-MaxCSVRows)
	}
}

func TestParseCSVByteLimit(t *testing.T) {
	// Exactly MaxCSVBytes is read whole (a long cell fills it).
	head := "toNumber,pad\n+14155550100,"
	exact := head + strings.Repeat("a", MaxCSVBytes-len(head))
	if _, err := ParseCSV(strings.NewReader(exact)); err != nil {
		t.Fatalf("16 MiB: %v", err)
	}
	got := refusedCSV(t, exact+"a")
	if want := []csvBroken{{0, "body"}}; !cmp.Equal(got, want) {
		t.Errorf("16 MiB + 1: %+v", got)
	}
	// An endless body is not read past the limit.
	var n endlessCell
	if _, err := ParseCSV(&n); err == nil {
		t.Fatal("endless body accepted")
	}
	if n > MaxCSVBytes+1 {
		t.Errorf("read %d bytes", n)
	}
}

// countingReader is an endless CSV cell that counts the bytes read.
type endlessCell int64

func (c *endlessCell) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	*c += endlessCell(len(p))
	return len(p), nil
}

// A reader's own failure refuses the body.
func TestParseCSVReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("toNumber\n+14155550100\n"), failingReader{})
	if _, err := ParseCSV(r); err == nil {
		t.Fatal("accepted a body that failed to read")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// Untrusted bytes must never panic; a batch that is accepted holds only
// unique E.164 numbers, and every refusal is an *invalid.Error.
func FuzzParseCSV(f *testing.F) {
	f.Add([]byte("\uFEFFtoNumber,name,timezone\r\n+14155550100,\"a, b\",Europe/Paris\r\n\r\n+14155550101,\"x\ny\",\r\n"))
	f.Add([]byte("phone_number\n+14155550100\n+14155550100\n"))
	f.Add([]byte("toNumber,x\n+1,\"\n"))
	f.Add([]byte("toNumber\n\xff\x00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseCSV(bytes.NewReader(data))
		if err != nil {
			if _, ok := err.(*invalid.Error); !ok {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		checkAcceptedBatch(t, b)
		for _, r := range b.Recipients {
			for k, v := range r.Variables {
				if s, ok := v.(string); !ok || invalid.Text(s) != "" || invalid.Text(k) != "" || k == "" {
					t.Fatalf("variable %q = %#v", k, v)
				}
			}
		}
	})
}

func BenchmarkParseCSV100k(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("toNumber,first_name,company,timezone\n")
	for i := range MaxCSVRows {
		fmt.Fprintf(&sb, "+1415%07d,Name %d,Acme,America/Chicago\n", i, i)
	}
	body := sb.String()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := ParseCSV(strings.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
}
