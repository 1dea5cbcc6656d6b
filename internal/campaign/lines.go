package campaign

import "github.com/parley-voice/parley/internal/model"

// Lines is how many of the organization's lines its campaigns may use
// together: limit − ceil(limit × reservePercent / 100), at least 1. The
// rest are kept free for inbound calls and calls placed through the API.
func Lines(limit, reservePercent int) int {
	reservePercent = min(max(reservePercent, 0), 100)
	reserved := (max(limit, 0)*reservePercent + 99) / 100
	return max(limit-reserved, 1)
}

// Concurrency is the campaign's concurrency at run time: maxConcurrency
// (by default the organization's limit), capped by that limit.
func Concurrency(cfg model.CampaignConfig, orgLimit int) int {
	if cfg.MaxConcurrency != nil && *cfg.MaxConcurrency < orgLimit {
		return *cfg.MaxConcurrency
	}
	return orgLimit
}
