package invalid

import (
	"net/url"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones must resolve on hosts without /usr/share/zoneinfo.
	"unicode/utf8"

	"golang.org/x/text/language"
)

var e164 = regexp.MustCompile(`^\+[1-9]\d{1,14}$`)

// IsE164 reports whether s is an E.164 number: "+", then 2 to 15 digits, the
// first not 0.
func IsE164(s string) bool { return e164.MatchString(s) }

// Len is the length of s in characters (Unicode code points), the unit of
// every "max N chars" rule.
func Len(s string) int { return utf8.RuneCountInString(s) }

// IsBlank reports whether s is empty or only white space.
func IsBlank(s string) bool { return strings.TrimSpace(s) == "" }

// IsHTTPURL reports whether s is an absolute http or https URL with a host.
func IsHTTPURL(s string) bool {
	if strings.TrimSpace(s) != s || s == "" {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Hostname() != ""
}

// IsTimezone reports whether s names an IANA time zone. "Local" and the empty
// name, which Go also accepts, are refused: they are not IANA names.
func IsTimezone(s string) bool {
	if s == "" || s == "Local" {
		return false
	}
	_, err := time.LoadLocation(s)
	return err == nil
}

// IsLanguage reports whether s is a well-formed BCP 47 language tag.
func IsLanguage(s string) bool {
	if s == "" || strings.ContainsAny(s, " _") {
		return false
	}
	_, err := language.Parse(s)
	return err == nil
}
