// Package pipeline is the conversation engine: one conversation per
// answered call turns the caller's audio into turns and the agent's replies
// back into audio. Frames from the media session go through voice activity
// detection (pipeline/vad) to find where the caller's turn ends, the turn
// is transcribed (stt), the model answers with text and tool calls (llm),
// sentences are spoken as soon as they are complete (tts), and caller
// speech longer than the agent's interruption threshold stops the agent's
// audio at once. Everything said and every tool call is appended to the
// call's transcript as it happens.
//
// Engine implements telephony.Conversation.
package pipeline
