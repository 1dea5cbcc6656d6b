// Package model holds the plain data types Parley persists: organizations,
// API keys, agents and the resources around them. It has no behaviour beyond
// small helpers; the rules live in the domain packages and persistence in
// package store, which may import only this package.
package model
