package deploy

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line  int
	cmd   string            // upper case: FROM, RUN, ...
	flags map[string]string // leading --name=value flags (COPY --from, HEALTHCHECK --interval)
	args  string            // the rest
}

// stage is one FROM and the instructions under it.
type stage struct {
	name, base string
	ins        []instruction
}

// dockerfile is a parsed Dockerfile: the ARGs before the first FROM and
// the stages.
type dockerfile struct {
	global map[string]string
	stages []stage
}

var knownInstructions = map[string]bool{
	"FROM": true, "RUN": true, "CMD": true, "LABEL": true, "EXPOSE": true, "ENV": true, "ADD": true, "COPY": true,
	"ENTRYPOINT": true, "VOLUME": true, "USER": true, "WORKDIR": true, "ARG": true, "ONBUILD": true,
	"STOPSIGNAL": true, "HEALTHCHECK": true, "SHELL": true,
}

// parseDockerfile reads text as the Dockerfile reference describes it:
// comment and empty lines dropped (inside a continuation too), lines ending in a
// backslash joined to the next, an instruction and its arguments a line.
func parseDockerfile(text string) (dockerfile, error) {
	df := dockerfile{global: map[string]string{}}
	var pending strings.Builder
	start := 0
	lines := strings.Split(text, "\n")
	for i, raw := range lines {
		trimmed := strings.TrimSpace(raw)
		if strings.HasPrefix(trimmed, "#") || trimmed == "" {
			continue // an empty line inside a continuation too
		}
		if pending.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(trimmed, `\`) {
			pending.WriteString(strings.TrimSpace(strings.TrimSuffix(trimmed, `\`)) + " ")
			continue
		}
		pending.WriteString(trimmed)
		in, err := parseInstruction(start, pending.String())
		pending.Reset()
		if err != nil {
			return df, err
		}
		switch {
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			s := stage{base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			} else if len(f) != 1 {
				return df, fmt.Errorf("line %d: FROM %s", in.line, in.args)
			}
			df.stages = append(df.stages, s)
		case len(df.stages) == 0 && in.cmd == "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			df.global[k] = unquote(v)
		case len(df.stages) == 0:
			return df, fmt.Errorf("line %d: %s before the first FROM", in.line, in.cmd)
		default:
			s := &df.stages[len(df.stages)-1]
			s.ins = append(s.ins, in)
		}
	}
	if pending.Len() > 0 {
		return df, fmt.Errorf("the file ends in a continuation")
	}
	return df, nil
}

func parseInstruction(line int, s string) (instruction, error) {
	cmd, rest, _ := strings.Cut(s, " ")
	in := instruction{line: line, cmd: strings.ToUpper(cmd), flags: map[string]string{}}
	if !knownInstructions[in.cmd] {
		return in, fmt.Errorf("line %d: unknown instruction %q", line, cmd)
	}
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "--") {
		var flag string
		flag, rest, _ = strings.Cut(rest, " ")
		k, v, _ := strings.Cut(strings.TrimPrefix(flag, "--"), "=")
		in.flags[k] = v
		rest = strings.TrimSpace(rest)
	}
	if rest == "" {
		return in, fmt.Errorf("line %d: %s without arguments", line, in.cmd)
	}
	in.args = rest
	return in, nil
}

// exec is an exec-form (JSON array) argument list.
func execForm(t *testing.T, in instruction, args string) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(args), &out); err != nil || len(out) == 0 {
		t.Fatalf("line %d: %s is not in exec form (a JSON array), so no shell is between it and SIGTERM: %s", in.line, in.cmd, args)
	}
	return out
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// vars are a stage's ARG defaults and ENV values in force, for ${NAME}.
func (s stage) vars(global map[string]string) map[string]string {
	v := map[string]string{}
	for _, in := range s.ins {
		switch in.cmd {
		case "ARG":
			k, val, ok := strings.Cut(in.args, "=")
			if !ok {
				val = global[k]
			}
			v[k] = unquote(val)
		case "ENV":
			for _, kv := range regexp.MustCompile(`(\w+)=("[^"]*"|\S+)`).FindAllStringSubmatch(in.args, -1) {
				v[kv[1]] = unquote(kv[2])
			}
		}
	}
	return v
}

func expand(s string, vars map[string]string) string {
	return os.Expand(s, func(k string) string { return vars[k] })
}

// all is every instruction of s named cmd.
func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.ins {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

func (s stage) last(t *testing.T, cmd string) instruction {
	t.Helper()
	all := s.all(cmd)
	if len(all) == 0 {
		t.Fatalf("the %s stage has no %s", s.base, cmd)
	}
	return all[len(all)-1]
}

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDockerfile checks the container image's recipe without building it
// (CI has no container runtime): a Go build stage on go.mod's Go, CGO-free
// as `make build`, of ./cmd/parley; a runtime stage that copies that
// binary, runs it as a user of its own (not root), installs the local
// speech packages (names as scripts/packages.txt has them) unless the
// documented build argument leaves them out along with the tags, probes
// /readyz on the port the HTTP address listens on, listens beyond the
// container's loopback, and exposes HTTP, SIP (UDP and TCP) and the RTP
// range it is set to.
func TestDockerfile(t *testing.T) {
	text := readRepoFile(t, "deploy/Dockerfile")
	df, err := parseDockerfile(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(df.stages) != 2 {
		t.Fatalf("%d stages, want a build stage and the image's", len(df.stages))
	}
	build, image := df.stages[0], df.stages[1]

	// The build stage: go.mod's Go, CGO-free, the tags passed through.
	goMod := readRepoFile(t, "go.mod")
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(goMod)
	if base := expand(build.base, df.global); !strings.HasPrefix(base, "docker.io/library/golang:"+goVersion[1]+"-") {
		t.Errorf("the build stage is FROM %s; go.mod asks for Go %s", base, goVersion[1])
	}
	if build.name == "" {
		t.Fatal("the build stage has no name for COPY --from")
	}
	var binary string
	for _, in := range build.all("RUN") {
		if strings.Contains(in.args, "go build") && strings.Contains(in.args, "./cmd/parley") {
			if !strings.Contains(in.args, "CGO_ENABLED=0") || !strings.Contains(in.args, `-tags "${TAGS}"`) {
				t.Errorf("line %d: the build is not `make build`'s (CGO_ENABLED=0, -tags from TAGS): %s", in.line, in.args)
			}
			if m := regexp.MustCompile(`-o (\S+)`).FindStringSubmatch(in.args); m != nil {
				binary = m[1]
			}
		}
	}
	if binary == "" {
		t.Fatal("no RUN builds ./cmd/parley with -o")
	}
	if !slices.ContainsFunc(build.all("ARG"), func(in instruction) bool { return strings.HasPrefix(in.args, "TAGS") }) {
		t.Error("the build stage has no TAGS build argument")
	}

	// The image: the binary copied from the build stage and run as the
	// entry point, in exec form.
	vars := image.vars(df.global)
	var installed string
	for _, in := range image.all("COPY") {
		if in.flags["from"] == build.name {
			f := strings.Fields(in.args)
			if len(f) == 2 && f[0] == binary {
				installed = f[1]
			}
		}
	}
	if installed == "" {
		t.Fatalf("the image does not COPY --from=%s %s", build.name, binary)
	}
	entry := image.last(t, "ENTRYPOINT")
	if args := execForm(t, entry, entry.args); args[0] != installed {
		t.Errorf("the entry point runs %s, not the binary copied to %s", args[0], installed)
	}
	if cmd := image.last(t, "CMD"); !slices.Equal(execForm(t, cmd, cmd.args), []string{"serve"}) {
		t.Errorf("CMD %s, want [\"serve\"]", cmd.args)
	}

	// A user of its own, made in the image, in force at the entry point.
	user := image.last(t, "USER")
	name, _, _ := strings.Cut(user.args, ":")
	if name == "root" || name == "0" {
		t.Errorf("line %d: runs as root", user.line)
	}
	if user.line > entry.line {
		t.Errorf("USER (line %d) comes after ENTRYPOINT", user.line)
	}
	if !slices.ContainsFunc(image.all("RUN"), func(in instruction) bool {
		return regexp.MustCompile(`useradd .*\b` + regexp.QuoteMeta(name) + `$`).MatchString(in.args)
	}) {
		t.Errorf("no RUN creates the user %s", name)
	}

	// The speech packages, by the names scripts/packages.txt installs
	// them under; and how to leave them out, said where it is built.
	var apt string
	for _, in := range image.all("RUN") {
		if strings.Contains(in.args, "apt-get install") {
			apt = expand(in.args, vars)
		}
	}
	packages := readRepoFile(t, "scripts/packages.txt")
	for _, p := range []string{"espeak-ng", "pocketsphinx", "pocketsphinx-en-us"} {
		if !slices.Contains(strings.Fields(apt), p) {
			t.Errorf("the image does not install %s: %s", p, apt)
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p) + ` `).MatchString(packages) {
			t.Errorf("%s is not a package scripts/packages.txt names", p)
		}
	}
	if !strings.Contains(text, `--build-arg TAGS="nosphinx nosherpa" --build-arg SPEECH_PACKAGES=`) {
		t.Error("the Dockerfile does not say how to build without the speech packages (TAGS and SPEECH_PACKAGES)")
	}

	// Listening beyond loopback, probed on /readyz, the ports exposed.
	host, httpPort, err := net.SplitHostPort(vars["PARLEY_ADDR"])
	if err != nil || host == "127.0.0.1" || host == "localhost" {
		t.Fatalf("PARLEY_ADDR %q: the container's HTTP must listen beyond its loopback", vars["PARLEY_ADDR"])
	}
	hc := image.last(t, "HEALTHCHECK")
	probe, ok := strings.CutPrefix(hc.args, "CMD ")
	if !ok {
		t.Fatalf("line %d: HEALTHCHECK %s runs no command", hc.line, hc.args)
	}
	if !slices.Contains(execForm(t, hc, probe), "http://127.0.0.1:"+httpPort+"/readyz") {
		t.Errorf("the health check %s does not ask /readyz on port %s", probe, httpPort)
	}
	_, sipPort, err := net.SplitHostPort(vars["PARLEY_SIP_ADDR"])
	if err != nil {
		t.Fatalf("PARLEY_SIP_ADDR %q: %v", vars["PARLEY_SIP_ADDR"], err)
	}
	rtp := vars["PARLEY_RTP_PORTS"]
	var exposed []string
	for _, in := range image.all("EXPOSE") {
		exposed = append(exposed, strings.Fields(expand(in.args, vars))...)
	}
	for _, want := range []string{httpPort + "/tcp", sipPort + "/udp", sipPort + "/tcp", rtp + "/udp"} {
		if !slices.Contains(exposed, want) {
			t.Errorf("EXPOSE %v lacks %s", exposed, want)
		}
	}
	if v := image.all("VOLUME"); len(v) == 0 || strings.TrimSpace(v[0].args) != vars["PARLEY_DATA_DIR"] {
		t.Errorf("the data dir %s is not a volume", vars["PARLEY_DATA_DIR"])
	}

	// The build context keeps what the build needs.
	for _, line := range strings.Split(readRepoFile(t, ".dockerignore"), "\n") {
		line = strings.TrimSpace(line)
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "internal", "*", ".git"} {
			if strings.Trim(line, "/") == needed {
				t.Errorf(".dockerignore leaves out %s", line)
			}
		}
	}
}

// TestParseDockerfile: the parser refuses what Docker would.
func TestParseDockerfile(t *testing.T) {
	for _, bad := range []string{
		"RUN true\n",                     // before FROM
		"FROM x\nRUNN true\n",            // unknown
		"FROM x\nRUN true \\\n",          // ends in a continuation
		"FROM x\nCOPY\n",                 // no arguments
		"FROM x AS y z\n",                // FROM with junk
		"FROM a\n# c\nRUN a \\\n  b\n\\", // dangling
	} {
		if _, err := parseDockerfile(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	df, err := parseDockerfile("ARG V=1\nFROM a:${V} AS b\nRUN one \\\n# note\n  two\nCOPY --from=b --chown=x /a /b\n")
	if err != nil {
		t.Fatal(err)
	}
	s := df.stages[0]
	if df.global["V"] != "1" || s.name != "b" || s.ins[0].args != "one two" || s.ins[1].flags["from"] != "b" || s.ins[1].flags["chown"] != "x" || s.ins[1].args != "/a /b" {
		t.Errorf("parsed %+v", df)
	}
}
