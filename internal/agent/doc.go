// Package agent owns voice agents: their configuration rules (limits, enums,
// references that must exist in the same organization, mode fixed at
// creation), duplication, and the custom tools that belong to them. It
// answers Views: an agent with the folder, trunk, phone numbers, tools and
// knowledge bases it refers to.
package agent
