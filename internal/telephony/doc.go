// Package telephony connects the call plane to the phone network. It is the
// real call.Dialer (an agent's outbound call through its SIP trunk, the
// operator's default trunk or the loopback trunk) and the inbound side
// (routing an INVITE to the agent that owns the dialed number or
// agent-<uuid>, trunk authentication, admission under the organization's
// limit, the pre-call webhook, answering), and the door for web calls (a
// browser's WebRTC offer answered as an inbound test call, on a
// media/webrtc peer instead of a SIP leg). Once a call is answered it
// records it, hands the media session to the Conversation and turns how the
// leg ended into the call's result. Transfers (cold by REFER or bridging,
// warm with hold and introduction) live here too; the conversation engine
// decides when.
package telephony
