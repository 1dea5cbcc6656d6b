package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// areaOf is the index in flagAreas of the flag's area, or -1.
func areaOf(name string) int {
	best, bestLen := -1, 0
	for i, a := range flagAreas {
		for _, p := range a.flags {
			if p == name {
				return i
			}
			if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) && len(prefix) > bestLen {
				best, bestLen = i, len(prefix)
			}
		}
	}
	return best
}

// writeHelp prints the command's flags by area, one line each: name,
// value kind, what it does and its default.
func writeHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: parley %s [flags]\n\nEvery flag also reads its environment twin: --data-dir is %s (the flag wins).\n", fs.Name(), EnvName("data-dir"))
	groups := make([][]*flag.Flag, len(flagAreas)+1) // [0]: the command's own
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		groups[areaOf(f.Name)+1] = append(groups[areaOf(f.Name)+1], f)
		width = max(width, len(flagSyntax(f)))
	})
	width = min(width, 36)
	for i, g := range groups {
		if len(g) == 0 {
			continue
		}
		title := "This command"
		if i > 0 {
			title = flagAreas[i-1].title
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, f := range g {
			_, usage := flag.UnquoteUsage(f)
			line := fmt.Sprintf("  %-*s  %s", width, flagSyntax(f), strings.Join(strings.Fields(usage), " "))
			if !isZeroDefault(f.DefValue) {
				line += " (default " + f.DefValue + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
}

// flagSyntax is "--name kind" ("--name" for a switch).
func flagSyntax(f *flag.Flag) string {
	kind, _ := flag.UnquoteUsage(f)
	if kind == "" {
		return "--" + f.Name
	}
	return "--" + f.Name + " " + kind
}

func isZeroDefault(v string) bool {
	switch v {
	case "", "0", "0s", "false":
		return true
	}
	return false
}

// reportUsage tells, on the command's output, what was wrong with its
// arguments and where its flags are listed, in two lines (the help itself
// is long), and returns errUsage.
func reportUsage(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	typed, unknown := strings.CutPrefix(msg, undefinedFlagMsg)
	if unknown {
		msg = "unknown flag --" + strings.TrimLeft(typed, "-")
	}
	fmt.Fprintf(fs.Output(), "parley %s: %s\n", fs.Name(), msg)
	hint := fmt.Sprintf("Run 'parley %s --help' for its flags.", fs.Name())
	if near := nearestFlag(fs, typed); unknown && near != "" {
		hint = fmt.Sprintf("Did you mean --%s? Run 'parley %s --help' for its flags.", near, fs.Name())
	}
	fmt.Fprintln(fs.Output(), hint)
	return errUsage
}

// undefinedFlagMsg starts the flag package's error for a flag it does not
// know.
const undefinedFlagMsg = "flag provided but not defined: -"

// nearestFlag is the command's flag a mistyped one is closest to, when one
// is close (at most two edits, or its name contains the typed one), else "".
func nearestFlag(fs *flag.FlagSet, typed string) string {
	typed = strings.TrimLeft(typed, "-")
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(typed, f.Name)
		if d > 2 && len(typed) >= 4 && strings.Contains(f.Name, typed) {
			d = 2
		}
		if d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of two short ASCII strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// parseCommand reads a command's flags and their environment twins (parse).
// --help prints the command's help (flag.ErrHelp); a bad flag or value
// prints the error and a line pointing at --help (errUsage); so do
// arguments where the command takes none.
func parseCommand(fs *flag.FlagSet, args []string, getenv func(string) string, maxArgs int) error {
	if err := parse(fs, args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return reportUsage(fs, err)
	}
	if fs.NArg() > maxArgs {
		return reportUsage(fs, fmt.Errorf("unexpected arguments %q", fs.Args()[maxArgs:]))
	}
	return nil
}
