package opt

import (
	"strings"
	"testing"
)

// An agent-sized body: typed fields, an array of typed objects and a
// free-form object, the shape every API create goes through.
var benchBody = []byte(`{"name":"Front desk","folderId":null,"count":3,"ratio":0.7,` +
	`"vars":{"greeting":"Hello","hours":{"open":"09:00","close":"17:00","days":["mon","tue","wed","thu","fri"]},"caf\u00e9":true},` +
	`"routes":[{"to_number":"+14155550100","condition":"billing"},{"to_number":"+14155550101","condition":"sales"}],` +
	`"warm":{"holdMessage":"One moment","holdMusicEnabled":true},"ids":["a","b","c","d"]}`)

func BenchmarkDecode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var r request
		if err := Decode(benchBody, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// The raw-bytes scan alone (text, and duplicate keys).
func BenchmarkScan(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckText(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

// A 1 MiB body repeating a key in each of 70,000 objects: every one is
// named, in time linear in their number.
func BenchmarkScanManyDuplicates(b *testing.B) {
	body := []byte(`{"vars":{"l":[` + strings.TrimSuffix(strings.Repeat(`{"a":1,"a":1},`, 70000), ",") + `]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckDuplicateKeys(body); len(err.(*DecodeError).Fields) != 70000 {
			b.Fatal(err)
		}
	}
}
