package app

import (
	"bytes"
	"context"
	"flag"
	"slices"
	"strings"
	"testing"
)

// Every flag of serve is listed under an area, and a name in flagAreas
// names a flag (prefixes may wait for theirs).
func TestEveryServeFlagHasAnArea(t *testing.T) {
	fs := newServeFlags()
	fs.VisitAll(func(f *flag.Flag) {
		if areaOf(f.Name) < 0 {
			t.Errorf("--%s has no area in serve --help: add its name to one of flagAreas (config.go)", f.Name)
		}
	})
	for _, a := range flagAreas {
		for _, n := range a.flags {
			if !strings.HasSuffix(n, "*") && fs.Lookup(n) == nil {
				t.Errorf("flagAreas names --%s (%s), which serve does not have", n, a.title)
			}
		}
	}
	for name, want := range map[string]string{
		"sip-addr": "SIP and RTP", "sip-invite-rate": "Limits", "sip-max-dialogs": "Limits", "stt": "Speech",
		"stt-base-url": "Speech", "log-format": "Observability", "data-dir": "Data and database", "llm-model": "LLM and knowledge bases",
	} {
		if i := areaOf(name); i < 0 || flagAreas[i].title != want {
			t.Errorf("--%s is under area %d, want %q", name, i, want)
		}
	}
}

// serve --help: on stdout, exit 0, every flag on one line of its own
// under its area's heading, the areas in flagAreas' order.
func TestServeHelpIsGroupedOneLineAFlag(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "-help"} {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), []string{"serve", arg}, &out, &errOut, env(nil)); code != 0 || errOut.Len() != 0 {
			t.Fatalf("serve %s: exit %d, stderr %q", arg, code, errOut.String())
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		var headings []string
		heading := map[string]string{} // flag → the heading above it
		current := ""
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "  --"):
				name := strings.TrimPrefix(strings.Fields(l)[0], "--")
				if _, dup := heading[name]; dup {
					t.Errorf("--%s is listed twice", name)
				}
				heading[name] = current
			case strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " "):
				current = strings.TrimSuffix(l, ":")
				headings = append(headings, current)
			case l != "" && !strings.HasPrefix(l, "Usage:") && !strings.HasPrefix(l, "Every flag"):
				t.Errorf("a line that is neither a flag nor a heading: %q", l)
			}
		}
		fs := newServeFlags()
		n := 0
		fs.VisitAll(func(f *flag.Flag) {
			n++
			if h, ok := heading[f.Name]; !ok {
				t.Errorf("--%s is not listed", f.Name)
			} else if h != flagAreas[areaOf(f.Name)].title {
				t.Errorf("--%s is under %q, want %q", f.Name, h, flagAreas[areaOf(f.Name)].title)
			}
		})
		if len(heading) != n {
			t.Errorf("%d flag lines for %d flags", len(heading), n)
		}
		var want []string
		for _, a := range flagAreas {
			if slices.Contains(headings, a.title) {
				want = append(want, a.title)
			}
		}
		if !slices.Equal(headings, want) || len(headings) < 8 {
			t.Errorf("headings %q, want the areas in order %q", headings, want)
		}
		if !strings.Contains(out.String(), "  --addr string ") || !strings.Contains(out.String(), "HTTP listen address (default 127.0.0.1:8080)") {
			t.Errorf("--addr's line lacks its kind or default:\n%s", out.String())
		}
	}
}

// A mistyped flag or a bad value: the error and one line pointing at
// --help, exit 2, for serve and the other commands alike.
func TestMistypedFlagIsTwoLines(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		env     map[string]string
		err     string // in the first line
		suggest string // in the second, or ""
	}{
		{[]string{"serve", "--sip-adr", "127.0.0.1:0"}, nil, "unknown flag --sip-adr", "--sip-addr"},
		{[]string{"serve", "--llm-modle", "x"}, nil, "unknown flag --llm-modle", "--llm-model"},
		{[]string{"serve", "--zzzzzz"}, nil, "unknown flag --zzzzzz", ""},
		{[]string{"serve", "--max-concurrent-calls", "many"}, nil, `invalid value "many" for flag -max-concurrent-calls`, ""},
		{[]string{"serve"}, map[string]string{"PARLEY_RATE_LIMIT": "fast"}, `PARLEY_RATE_LIMIT="fast"`, ""},
		{[]string{"serve", "extra"}, nil, `unexpected arguments ["extra"]`, ""},
		{[]string{"migrate", "--data-dri", "x"}, nil, "unknown flag --data-dri", "--data-dir"},
		{[]string{"keys", "create", "--orgg", "a"}, nil, "unknown flag --orgg", "--org"},
		{[]string{"users", "reset-password", "--emial", "a@b.c"}, nil, "unknown flag --emial", "--email"},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), tc.args, &out, &errOut, env(tc.env))
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		cmd := strings.Join(tc.args[:1], " ")
		if tc.args[0] == "keys" || tc.args[0] == "users" {
			cmd = strings.Join(tc.args[:2], " ")
		}
		if code != 2 || out.Len() != 0 || len(lines) != 2 {
			t.Errorf("%v: exit %d, stdout %q, stderr %d lines %q; want 2, nothing, 2 lines", tc.args, code, out.String(), len(lines), errOut.String())
			continue
		}
		if !strings.HasPrefix(lines[0], "parley "+cmd+": ") || !strings.Contains(lines[0], tc.err) {
			t.Errorf("%v: first line %q, want the error %q", tc.args, lines[0], tc.err)
		}
		if !strings.Contains(lines[1], "'parley "+cmd+" --help'") {
			t.Errorf("%v: second line %q does not point at --help", tc.args, lines[1])
		}
		if hasSuggestion := strings.Contains(lines[1], "Did you mean"); hasSuggestion != (tc.suggest != "") || !strings.Contains(lines[1], tc.suggest) {
			t.Errorf("%v: second line %q, want the suggestion %q", tc.args, lines[1], tc.suggest)
		}
	}
}

func TestUnknownCommandIsTwoLines(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"serv", "--addr", "x"}, &out, &errOut, env(nil))
	if code != 2 || out.Len() != 0 || errOut.String() != "parley: unknown command \"serv\"\nRun 'parley help' for the commands.\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"help"}, &out, &errOut, env(nil)); code != 0 || !strings.Contains(out.String(), "parley users reset-password --email EMAIL") {
		t.Errorf("help: exit %d, %q", code, out.String())
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"sip-adr", "sip-addr", 1}, {"kitten", "sitting", 3}, {"llm-modle", "llm-model", 2}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
