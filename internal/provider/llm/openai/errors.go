package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// attemptLog remembers how the last failed attempt went, for the error
// text: the SDK's error prints only the status, and it cannot parse error
// bodies that are not the OpenAI shape (Ollama's {"error":"..."}, a
// proxy's HTML page), losing even the status then.
type attemptLog struct {
	failed  bool
	status  int
	message string
}

// failure is the last failed attempt.
type failure struct {
	status  int // 0: no answer
	message string
}

// record notes a failed attempt: resp with a status >= 300, or err. The
// body it reads is put back for the SDK.
func (l *attemptLog) record(resp *http.Response, err error) {
	l.failed = true
	if err != nil || resp == nil {
		l.status, l.message = 0, ""
		return
	}
	l.status = resp.StatusCode
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	l.message = errorMessage(body)
}

func (l *attemptLog) last() *failure {
	if !l.failed {
		return nil
	}
	return &failure{status: l.status, message: l.message}
}

// errorMessage finds the provider's message in an error body: OpenAI's
// {"error":{"message":...}}, {"error":"..."} (Ollama, llama.cpp),
// {"message":...}, {"detail":...}, or else the text itself (apierr.Parse);
// whole, for statusError to redact and shorten.
func errorMessage(body []byte) string {
	return apierr.Parse(body).Message
}

// explain turns a failed stream's error into one wrapping an llm error
// kind, or ctx's error when the caller canceled. What the server said is
// shown as apierr.Redact allows with key (sent: whether a request's
// headers, with the key, went out).
func explain(ctx, run context.Context, err error, last *failure, key string, sent bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("llm stream: %w", ctx.Err())
	}
	if run.Err() != nil {
		if cause := context.Cause(run); errors.Is(cause, llm.ErrTimeout) {
			return cause
		}
	}
	status, message := 0, ""
	if apiErr, ok := errors.AsType[*sdk.Error](err); ok {
		status, message = apiErr.StatusCode, apiErr.Message
	}
	if last != nil && last.status != 0 {
		status = last.status
		if last.message != "" {
			message = last.message
		}
	}
	if status != 0 {
		return statusError(status, message, key)
	}
	if se, ok := errors.AsType[*ssestream.StreamError](err); ok {
		return fmt.Errorf("%w: error event mid-stream%s", llm.ErrUnavailable, apierr.Quote(streamErrorMessage(se), key))
	}
	// Without the URL, the configured base URL: say what failed, not where.
	text, ok := apierr.Unanswered(err, key, sent)
	if !ok {
		text = "the answer broke off or could not be read"
	}
	return fmt.Errorf("%w: %s", llm.ErrUnavailable, text)
}

// statusError is the error of an HTTP error answer: the status, and the
// server's message as apierr.Redact shows it with key (none when it
// cannot be shown).
func statusError(status int, message, key string) error {
	kind := llm.ErrRejected
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooManyRequests, status >= 500:
		kind = llm.ErrUnavailable
	}
	return fmt.Errorf("%w: %d %s%s", kind, status, http.StatusText(status), apierr.Quote(message, key))
}

// streamErrorMessage is the message of an error event, or its raw data.
func streamErrorMessage(se *ssestream.StreamError) string {
	if m := errorMessage(se.Event.Data); m != "" {
		return m
	}
	return se.Message
}
