// Package call owns a call's rules: the one state machine every status change
// goes through, the hang-up causes, the template variables a call carries
// and how prompts are rendered from them, the call record as it is answered
// and delivered, and the Dialer boundary the telephony layer implements.
package call
