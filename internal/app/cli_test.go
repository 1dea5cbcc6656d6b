package app

import (
	"runtime/debug"
	"testing"
)

// parley version: -ldflags' version wins, else the module's from the
// build info; then the revision (and whether the tree was modified) and
// the Go release.
func TestVersionLine(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20261206105144-384c2b4935f4+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "384c2b4935f4450012b921c7b275502bcf487269"}, {Key: "vcs.modified", Value: "true"}}}
	tagged := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "false"}}}
	bare := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}
	for _, tc := range []struct {
		ldflags     string
		info        *debug.BuildInfo
		line, short string
	}{
		{"dev", stamped, "parley v0.0.0-20261206105144-384c2b4935f4+dirty revision 384c2b4935f4450012b921c7b275502bcf487269 (modified) go1.26.0", "v0.0.0-20261206105144-384c2b4935f4+dirty"},
		{"dev", tagged, "parley v1.4.0 revision 0123456789abcdef0123456789abcdef01234567 go1.26.0", "v1.4.0"},
		{"v2.0.0-rc1", tagged, "parley v2.0.0-rc1 revision 0123456789abcdef0123456789abcdef01234567 go1.26.0", "v2.0.0-rc1"},
		{"dev", bare, "parley (devel) go1.26.0", "dev"},
		{"dev", nil, "parley dev", "dev"},
		{"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: tagged.Settings}, "parley (devel) revision 0123456789abcdef0123456789abcdef01234567", "dev-0123456789ab"},
	} {
		if got := versionLine(tc.ldflags, tc.info); got != tc.line {
			t.Errorf("versionLine(%q, %v):\n got %q\nwant %q", tc.ldflags, tc.info, got, tc.line)
		}
		if got := shortVersion(tc.ldflags, tc.info); got != tc.short {
			t.Errorf("shortVersion(%q): %q, want %q", tc.ldflags, got, tc.short)
		}
	}
}

// The dashboard's URL in the start-up lines is one a browser opens.
func TestDashboardURL(t *testing.T) {
	for _, tc := range []struct {
		public, addr, want string
	}{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080/"},
		{"", "0.0.0.0:8080", "http://localhost:8080/"},
		{"", "[::]:9000", "http://localhost:9000/"},
		{"", ":8080", "http://localhost:8080/"},
		{"", "[::1]:8080", "http://[::1]:8080/"},
		{"https://voice.example.com/", "0.0.0.0:8080", "https://voice.example.com/"},
		{"https://user:pw@voice.example.com/parley?t=1", "0.0.0.0:8080", "https://voice.example.com/parley/"},
	} {
		if got := dashboardURL(Config{PublicURL: tc.public}, tc.addr); got != tc.want {
			t.Errorf("dashboardURL(%q, %q) = %q, want %q", tc.public, tc.addr, got, tc.want)
		}
	}
}
