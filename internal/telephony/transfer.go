package telephony

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
)

// Transfer modes (the agent's transferMode).
const (
	TransferCold = "cold"
	TransferWarm = "warm"
)

// Speaker says text on a session: the conversation engine's voice. Warm
// transfers use it for the hold message, the introduction and the summary.
type Speaker interface {
	Say(ctx context.Context, s media.Session, text string) error
}

// WarmTransfer is what the conversation hands a warm transfer.
type WarmTransfer struct {
	// Summary is what the destination is told about the call (the
	// conversation engine writes it from warmTransferConfig.summaryPrompt).
	Summary string
	// Speaker voices the messages; nil skips them (only hold music plays).
	Speaker Speaker
	// TurnID labels the transfer's transcript entry (the conversation's
	// turn; "" labels it transfer_to_number). Used by cold transfers too.
	TurnID string
	// Record adds the transfer's transcript entry to the conversation's
	// own transcript writer, so it lands in order with the other entries
	// and a database that is away holds the conversation up no more than
	// theirs do. nil: the entry is appended here, retried (Phone.Writes)
	// before Transfer returns. Used by cold transfers too.
	Record func(entry map[string]any)
}

// referWait bounds the wait for the far end's NOTIFY after a REFER.
const referWait = 10 * time.Second

// Transfer hands the caller to number and leaves the call: the call ends
// TRANSFERRED once the caller is with the destination. Cold: the caller's
// side is asked to call number itself (REFER); if it refuses, Parley dials
// number and bridges the two legs. Warm: the caller hears the hold message
// (and hold music), the destination is dialed and told the introduction and
// summary, then the legs are bridged. An error means the caller is still
// with the agent (the destination did not answer, say).
func (l *Live) Transfer(ctx context.Context, number, mode string, warm WarmTransfer) error {
	ln := l.line
	if ln == nil || ln.sip == nil {
		return errors.New("this call has no telephone line to transfer")
	}
	var err error
	var how string
	switch mode {
	case TransferWarm:
		how, err = ln.warmTransfer(ctx, l, number, warm)
	default:
		how, err = ln.coldTransfer(ctx, l, number)
	}
	out := how
	if err != nil {
		out = "transfer failed: " + err.Error()
	}
	ln.p.appendTool(l.Call, l.Answered, warm, "transfer_to_number", map[string]any{"to_number": number, "mode": modeOrCold(mode)}, out)
	return err
}

func modeOrCold(m string) string {
	if m == TransferWarm {
		return m
	}
	return TransferCold
}

func (ln *line) coldTransfer(ctx context.Context, l *Live, number string) (string, error) {
	if ln.trunk.Transport != model.TransportLoopback && ln.trunk.Host != "" {
		t, err := ln.p.target(ln.trunk, l.Call.OrgID, "", number)
		if err == nil {
			ln.mu.Lock()
			ln.detached = true // the far end may hang up on us: that is the transfer working
			ln.cause, ln.status = call.CauseTransferred, model.CallTransferred
			ln.mu.Unlock()
			if err = ln.sip.Refer(ctx, t, referWait); err == nil {
				_ = ln.leg.Hangup(context.WithoutCancel(ctx))
				return "transferred by REFER", nil
			}
			ln.mu.Lock()
			ln.detached, ln.cause, ln.status = false, "", ""
			ln.mu.Unlock()
			ln.p.log().Info("REFER refused; bridging instead", "call_id", l.Call.ID, "err", err)
		}
	}
	dest, err := ln.dialDestination(ctx, l, number)
	if err != nil {
		return "", err
	}
	ln.bridge(dest, true)
	return "transferred by bridging a new call leg", nil
}

func (ln *line) warmTransfer(ctx context.Context, l *Live, number string, w WarmTransfer) (string, error) {
	cfg := model.WarmTransferConfig{}
	if l.Agent.Config.WarmTransferConfig != nil {
		cfg = *l.Agent.Config.WarmTransferConfig
	}
	say := func(s media.Session, text *string) {
		if w.Speaker != nil && text != nil && *text != "" {
			if err := w.Speaker.Say(ctx, s, *text); err != nil {
				ln.p.log().Warn("warm transfer message not spoken", "call_id", l.Call.ID, "err", err)
			}
		}
	}
	say(ln.leg, cfg.HoldMessage)
	caller := ln.leg.Audio(ln.leg.Rate())
	if err := caller.Drain(ctx); err != nil {
		return "", err
	}
	if cfg.HoldMusicEnabled != nil && *cfg.HoldMusicEnabled {
		_ = caller.Write(audio.HoldMusic(ln.leg.Rate(), 5*time.Minute))
	}
	dest, err := ln.dialDestination(ctx, l, number)
	caller.Flush()
	if err != nil {
		return "", err
	}
	say(dest, cfg.IntroMessage)
	if w.Summary != "" {
		say(dest, &w.Summary)
	}
	if err := dest.Audio(dest.Rate()).Drain(ctx); err != nil {
		_ = dest.Hangup(context.WithoutCancel(ctx))
		return "", fmt.Errorf("the destination hung up during the introduction")
	}
	keep := cfg.ContinueRecordingAfterTransfer == nil || *cfg.ContinueRecordingAfterTransfer
	ln.bridge(dest, keep)
	return "transferred after an introduction (warm)", nil
}

// dialDestination calls number through the call's trunk for a transfer.
func (ln *line) dialDestination(ctx context.Context, l *Live, number string) (*sipua.Leg, error) {
	t, err := ln.p.target(ln.trunk, l.Call.OrgID, "", number)
	if err != nil {
		return nil, err
	}
	t.FromUser = l.Call.FromNumber
	if l.Call.Direction == model.Inbound {
		t.FromUser = l.Call.ToNumber // the destination sees the agent's number
	}
	dest, err := ln.p.UA.Dial(ctx, t, nil)
	if err != nil {
		var rej *sipua.Rejected
		if errors.As(err, &rej) {
			return nil, fmt.Errorf("the destination answered %s", rej.Error())
		}
		return nil, err
	}
	return dest, nil
}

// bridge connects the caller with dest and hands the call over: it ends
// TRANSFERRED when either side hangs up. keepRecording leaves the
// recorder on (continueRecordingAfterTransfer).
func (ln *line) bridge(dest *sipua.Leg, keepRecording bool) {
	ln.mu.Lock()
	ln.detached = true
	ln.cause, ln.status = call.CauseTransferred, model.CallTransferred
	ln.mu.Unlock()
	if !keepRecording {
		ln.leg.SetRecorder(nil)
	}
	sipua.Bridge(ln.sip, dest)
	go func() {
		select {
		case <-ln.leg.Done():
			_ = dest.Hangup(context.Background())
		case <-dest.Done():
			_ = ln.leg.Hangup(context.Background())
		}
	}()
}

// appendTool adds a tool_call entry to the call's transcript, through the
// conversation's writer when it gave one (warm.Record).
func (p *Phone) appendTool(c model.Call, answered time.Time, warm WarmTransfer, name string, args map[string]any, output string) {
	argsJSON, _ := json.Marshal(args)
	turnID := warm.TurnID
	if turnID == "" {
		turnID = name
	}
	entry := map[string]any{ // seq: set by the store
		"role": "tool", "type": "tool_call", "turnId": turnID,
		"tool":   map[string]any{"name": name, "args": string(argsJSON)},
		"result": map[string]any{"output": output},
	}
	if warm.Record != nil {
		warm.Record(entry)
		return
	}
	t := call.NewTranscript(p.Store, c, answered)
	t.Writes = p.Writes
	if err := t.Append(context.Background(), entry); err != nil {
		p.log().Error("transcript entry lost: the database did not take it", "call_id", c.ID, "tool", name, "err", err)
	}
}
