package httpclient

import (
	"net/http"
	"testing"
)

func TestOr(t *testing.T) {
	given := &http.Client{}
	if c := Or(given); c.Client != given || c.own != nil {
		t.Errorf("the caller's client was not kept as it is")
	}
	c := Or(nil)
	if c.Client == nil || c.own == nil || c.Transport != c.own || c.own == http.DefaultTransport {
		t.Errorf("our own client: %+v", c)
	}
	c.CloseIdle()
	Or(given).CloseIdle() // nothing of the caller's is touched
}
