package opt

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parley-voice/parley/internal/invalid"
)

type route struct {
	To   string `json:"to_number"`
	Cond string `json:"condition"`
}

type nested struct {
	Hold  *string `json:"holdMessage,omitempty"`
	Music *bool   `json:"holdMusicEnabled,omitempty"`
}

type request struct {
	Name      Field[string]         `json:"name"`
	Count     Field[int]            `json:"count"`
	Ratio     Field[float64]        `json:"ratio"`
	Vars      Field[map[string]any] `json:"vars"`
	Routes    Field[[]route]        `json:"routes"`
	Warm      Field[nested]         `json:"warm"`
	IDs       Field[[]string]       `json:"ids"`
	NullableS Field[string]         `json:"folderId"`
}

func fieldsOfErr(t *testing.T, err error) []invalid.Field {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v is not a DecodeError", err)
	}
	return de.Fields
}

func TestDecodePresenceAndNull(t *testing.T) {
	var r request
	err := Decode([]byte(`{"name":"a","folderId":null,"vars":{"x":{"deep":[1,2]},"y":"z"},"routes":[{"to_number":"+1555","condition":"c"}],"warm":{"holdMessage":"h"}}`), &r)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Name.Present() || r.Name.V != "a" {
		t.Errorf("name = %+v", r.Name)
	}
	if !r.NullableS.Set || !r.NullableS.Null {
		t.Errorf("folderId should be set to null: %+v", r.NullableS)
	}
	if r.Count.Set {
		t.Errorf("count should be absent")
	}
	if got := r.Routes.V; len(got) != 1 || got[0].To != "+1555" {
		t.Errorf("routes = %+v", got)
	}
	if r.Warm.V.Hold == nil || *r.Warm.V.Hold != "h" || r.Warm.V.Music != nil {
		t.Errorf("warm = %+v", r.Warm.V)
	}
}

func TestDecodeReportsEveryBrokenField(t *testing.T) {
	var r request
	err := Decode([]byte(`{"name":5,"count":1.5,"ratio":"x","vars":[1],"routes":[{"to_number":"+1","bogus":1},{"condition":3}],"warm":{"holdMessage":"h","extra":true},"ids":[1],"zzz":1}`), &r)
	want := []invalid.Field{
		{Name: "zzz", Message: "is not a known field"},
		{Name: "name", Message: "must be a string"},
		{Name: "count", Message: "must be an integer"},
		{Name: "ratio", Message: "must be a number"},
		{Name: "vars", Message: "must be an object"},
		{Name: "routes[0].bogus", Message: "is not a known field"},
		{Name: "routes[1].condition", Message: "must be a string"},
		{Name: "warm.extra", Message: "is not a known field"},
		{Name: "ids", Message: "must be an array of strings"},
	}
	if diff := cmp.Diff(want, fieldsOfErr(t, err)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestDecodeRejectsNonObjects(t *testing.T) {
	for _, body := range []string{``, `   `, `[]`, `"x"`, `{"name":`, `{} {}`, `null`} {
		var r request
		if err := Decode([]byte(body), &r); err == nil {
			t.Errorf("Decode(%q) = nil, want error", body)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name":"a","routes":[{"to_number":"+1"}],"warm":{"holdMessage":null}}`))
	f.Add([]byte(`{"vars":{"a":[{"b":null}]},"ids":["x"]}`))
	f.Add([]byte(`{"name":"a","n\u0061me":"b","vars":{"x":[{"y":1,"y":2}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r request
		if Decode(data, &r) == nil { // and must never panic
			if dups := tokenDuplicates(t, bytes.TrimSpace(data)); len(dups) > 0 {
				t.Fatalf("%q decoded despite duplicate keys %q", data, dups)
			}
		}
	})
}
