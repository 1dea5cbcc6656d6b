package invalid

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestText(t *testing.T) {
	for s, want := range map[string]string{
		"": "", "plain": "", "café 😀": "", "\uFFFD": "", "\U0010FFFF": "",
		"a\x00b": TextNUL, "\xff": TextUTF8, "\xc0\x80": TextUTF8, "\xe0\x80\xaf": TextUTF8,
		"\xed\xa0\x80": TextUTF8, "\xe2\x82": TextUTF8, "\xf4\x90\x80\x80": TextUTF8,
	} {
		if got := Text(s); got != want {
			t.Errorf("Text(%q) = %q, want %q", s, got, want)
		}
	}
	if got := Visible("k\x00\xffé"); got != `k\u0000\xffé` {
		t.Errorf("Visible = %q", got)
	}
}

func TestValues(t *testing.T) {
	var l List
	v := url.Values{"q": {"ok", "a\x00"}, "good": {"x"}, "k\xff": {"v"}, "f": {"\xc0\x80"}}
	if bad := Values(v, &l); !cmp.Equal(bad, []string{"f", "k\xff", "q"}) {
		t.Fatalf("bad names %q", bad)
	}
	want := []Field{{Name: "f", Message: TextUTF8}, {Name: `k\xff`, Message: "key " + TextUTF8}, {Name: "q", Message: TextNUL}}
	if diff := cmp.Diff(want, l.Err().(*Error).Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if bad := Values(url.Values{"a": {"b"}}, &List{}); bad != nil {
		t.Error("good values refused")
	}
}

func TestStorable(t *testing.T) {
	for in, want := range map[string]string{
		"plain ☎":          "plain ☎",
		"a\x00b":           "a\uFFFDb",
		"\xff\xfe":         "\uFFFD",
		"over\xc0\x80long": "over\uFFFDlong",
		"":                 "",
	} {
		if got := Storable(in); got != want || Text(got) != "" {
			t.Errorf("Storable(%q) = %q, want %q", in, got, want)
		}
	}
}
