// Package twilio owns Parley's client of Twilio's Messages REST API and of
// the carriers that copy it (SignalWire, Telnyx's compatibility API, ...),
// and the check of the X-Twilio-Signature on the webhooks they send back.
// It is one plain HTTP request per message: no SDK, so no TWILIO_*
// environment variable can change where a message goes or which
// credentials are sent.
//
// # The request
//
// [Client.Send] sends
//
//	POST {BaseURL}/2010-04-01/Accounts/{AccountSID}/Messages.json
//	Authorization: Basic base64(AccountSID:AuthToken)
//	Content-Type: application/x-www-form-urlencoded
//
//	To=...&From=... (or MessagingServiceSid=...)&Body=...[&StatusCallback=...]
//
// and reads the message resource of the answer (201 Created):
// {"sid": "SM...", "status": "queued", "error_code": null,
// "error_message": null, ...} into a [Sent].
//
// # Errors
//
// A Send without To or Body, or without exactly one of From and
// MessagingServiceSID, is [ErrRejected] without a request. An error answer
// {"code": 21211, "message": "...", "more_info": "...", "status": 400} is an
// [*APIError] with Twilio's code and message, wrapping [ErrRejected] for 400
// and 422 (the message as asked can't be sent: an invalid 'To' number,
// 21211, a body over 1600 characters, 21617, ...) and [ErrUnavailable] for
// everything else: 401 and 403 ("credentials refused"), 404 (no such
// account), 429, 5xx. No connection, an answer that is not a message
// resource and Config.Timeout (default 15 s) running out for the whole
// exchange are ErrUnavailable too. Nothing is retried. Canceling ctx returns
// an error wrapping ctx.Err() and no kind. The auth token never appears in
// an error, not even when the server echoes it.
//
// # Webhooks
//
// [ValidSignature] checks the X-Twilio-Signature header of a status
// callback or inbound-message webhook; [Sign] computes it.
package twilio
