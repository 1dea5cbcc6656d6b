// Package eval owns test suites: their cases, runs and attempts, the
// simulated caller that calls the agent under test over the loopback trunk,
// the judge that scores each attempt, and test generation. A run is driven
// by the server that holds its lease (Runner); its attempts are ordinary
// calls placed through the call queue, so they share the organization's
// concurrency limit with every other call.
package eval
