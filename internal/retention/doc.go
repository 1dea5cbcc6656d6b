// Package retention deletes what organizations keep no longer: past an
// organization's recordingRetentionDays a call's recording (from local disk
// or the object store, through the recording store) and its recordingUrl,
// past its transcriptRetentionDays the call's transcript (emptied). The
// call records stay. Expiry counts from the call's endedAt.
//
// One server at a time sweeps, among those sharing a database: a pass runs
// only while its server holds the "retention" lease (store.Singletons),
// renewed in the transaction of every batch it writes, so a server that
// lost the lease (paused past it, say) writes nothing more. Each batch is
// its own short transaction; recordings are deleted between transactions,
// never while a row is locked. A recording is deleted before its
// recordingUrl is cleared, and a batch's cursor moves only past calls
// whose deletion succeeded: a failure is retried by the next pass, and a
// crash in between deletes again (deleting is idempotent).
package retention
