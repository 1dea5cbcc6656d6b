package llmtest

import "testing"

func TestTurnsCountsRunsOfUserMessages(t *testing.T) {
	msg := func(role string) map[string]any { return map[string]any{"role": role, "content": "x"} }
	cases := []struct {
		roles []string
		want  int
	}{
		{[]string{"system"}, 0},
		{[]string{"system", "assistant", "user"}, 1},
		{[]string{"system", "assistant", "user", "user"}, 1},
		{[]string{"system", "assistant", "user", "assistant", "user"}, 2},
		{[]string{"system", "user", "assistant", "tool", "user", "user", "assistant"}, 2},
	}
	for _, c := range cases {
		var r Request
		for _, role := range c.roles {
			r.Messages = append(r.Messages, msg(role))
		}
		if got := r.Turns(); got != c.want {
			t.Errorf("%v: Turns() = %d, want %d", c.roles, got, c.want)
		}
	}
}
