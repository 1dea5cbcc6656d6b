// Package twiliotest owns a fake Twilio Messages API for tests: an
// httptest server on 127.0.0.1 that speaks the real wire protocol, so the
// sms/twilio client is tested through its real HTTP, form and JSON code,
// and helpers that play Twilio's side of the webhooks.
//
// POST /2010-04-01/Accounts/{AccountSid}/Messages.json checks HTTP basic
// auth against Options.AccountSID and Options.AuthToken (401, error 20003,
// otherwise; 404, error 20404, for another account's path) and validates
// the form as Twilio does, with Twilio's error body {"code", "message",
// "more_info", "status"}: To must be an E.164 number (21604 when missing,
// 21211 when invalid), From an E.164 number (21212) unless a
// MessagingServiceSid ("MG" + 32 hex, 21701) is given (21603 when neither
// is), Body 1 to 1600 characters (21602, 21617) and StatusCallback, when
// given, an http(s) URL (21609). Every request to that path is recorded
// ([Server.Messages]); a valid one is answered from Options.Reply: by
// default 201 Created with a message resource (sid "SM" + 32 hex, status
// "queued"), or an injected error, delay or hang.
//
// [Server.StatusCallback] and [Server.Inbound] POST signed webhooks the way
// Twilio does, for tests of the receiving side.
package twiliotest
