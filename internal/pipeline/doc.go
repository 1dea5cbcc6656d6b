// Package pipeline is the conversation engine: one conversation per
// answered call turns the caller's audio into turns and the agent's replies
// back into audio.
//
// A conversation is a loop (conversation.go) that owns the history and
// every decision, fed by goroutines that do the slow work: a transcription
// per caller utterance (listen.go: VAD from pipeline/vad, then stt, streamed
// while the caller speaks when the recognizer can) and a reply per agent
// turn (reply.go: the model's answer spoken sentence by sentence through
// tts as it streams, and its tool calls: tools.go, customtool.go). How the
// agent takes turns is its runtimeConfig's (pipeline/turntaking): the
// caller's turn ends after a silence judged from their words so far, caller
// speech past the agent's interruption threshold with enough real words
// stops the reply within the frame, and a tool that keeps the caller
// waiting gets a filler (filler.go). Voicemail detection (voicemail.go, pipeline/voicemail) screens
// outbound calls before the greeting. Everything said and every tool call
// is appended to the call's transcript as it happens (transcript.go); each
// turn's latency is measured stage by stage (latency.go) into the call's
// metrics, the log, Prometheus and an OpenTelemetry trace (trace.go).
//
// What the agent brings to a conversation, its prompt, model settings,
// tools and knowledge bases, is one type (agentside.go), which the text
// chats of test runs share (textchat.go: Engine.Chat, a simulated caller
// and the agent taking turns in text, no audio).
//
// Engine implements telephony.Conversation. docs/architecture.md ("The
// conversation engine") describes the rules and numbers.
package pipeline
