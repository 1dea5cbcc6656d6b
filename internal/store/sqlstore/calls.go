package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// callDocs is a call's JSON columns, encoded.
type callDocs struct{ variables, transcript, metrics string }

// callField is one column of calls: where a model.Call keeps it, how it is
// written, and whether it is one of the big columns a Minimal list leaves
// out.
type callField struct {
	column string
	big    bool
	dest   func(c *model.Call) any
	value  func(t *tx, c *model.Call, d callDocs) any
}

// callFields is every column of calls, in table order. Queries name the
// table c.
var callFields = []callField{
	{"id", false, func(c *model.Call) any { return &c.ID }, func(_ *tx, c *model.Call, _ callDocs) any { return c.ID }},
	{"org_id", false, func(c *model.Call) any { return &c.OrgID }, func(_ *tx, c *model.Call, _ callDocs) any { return c.OrgID }},
	{"agent_id", false, func(c *model.Call) any { return &c.AgentID }, func(_ *tx, c *model.Call, _ callDocs) any { return c.AgentID }},
	{"agent_name", false, func(c *model.Call) any { return &c.AgentName }, func(_ *tx, c *model.Call, _ callDocs) any { return c.AgentName }},
	{"agent_caller_id_name", false, func(c *model.Call) any { return &c.AgentCallerIDName }, func(_ *tx, c *model.Call, _ callDocs) any { return c.AgentCallerIDName }},
	{"sip_trunk_id", false, func(c *model.Call) any { return &c.SIPTrunkID }, func(_ *tx, c *model.Call, _ callDocs) any { return c.SIPTrunkID }},
	{"direction", false, func(c *model.Call) any { return &c.Direction }, func(_ *tx, c *model.Call, _ callDocs) any { return c.Direction }},
	{"status", false, func(c *model.Call) any { return &c.Status }, func(_ *tx, c *model.Call, _ callDocs) any { return c.Status }},
	{"from_number", false, func(c *model.Call) any { return &c.FromNumber }, func(_ *tx, c *model.Call, _ callDocs) any { return c.FromNumber }},
	{"to_number", false, func(c *model.Call) any { return &c.ToNumber }, func(_ *tx, c *model.Call, _ callDocs) any { return c.ToNumber }},
	{"dialed_agent_id", false, func(c *model.Call) any { return &c.DialedAgentID }, func(_ *tx, c *model.Call, _ callDocs) any { return c.DialedAgentID }},
	{"variables", true, func(c *model.Call) any { return documentDest{&c.Variables} }, func(_ *tx, _ *model.Call, d callDocs) any { return d.variables }},
	{"prompt", false, func(c *model.Call) any { return &c.Prompt }, func(_ *tx, c *model.Call, _ callDocs) any { return c.Prompt }},
	{"first_message", false, func(c *model.Call) any { return &c.FirstMessage }, func(_ *tx, c *model.Call, _ callDocs) any { return c.FirstMessage }},
	{"recording_url", false, func(c *model.Call) any { return &c.RecordingURL }, func(_ *tx, c *model.Call, _ callDocs) any { return c.RecordingURL }},
	{"hangup_cause", false, func(c *model.Call) any { return &c.HangupCause }, func(_ *tx, c *model.Call, _ callDocs) any { return c.HangupCause }},
	{"error_message", false, func(c *model.Call) any { return &c.ErrorMessage }, func(_ *tx, c *model.Call, _ callDocs) any { return c.ErrorMessage }},
	{"transcript", true, func(c *model.Call) any { return documentDest{&c.Transcript} }, func(_ *tx, _ *model.Call, d callDocs) any { return d.transcript }},
	{"summary", true, func(c *model.Call) any { return &c.Summary }, func(_ *tx, c *model.Call, _ callDocs) any { return c.Summary }},
	{"metrics", true, func(c *model.Call) any { return documentDest{&c.Metrics} }, func(_ *tx, _ *model.Call, d callDocs) any { return d.metrics }},
	{"initiated_at", false, func(c *model.Call) any { return nullTimeDest{&c.InitiatedAt} }, func(t *tx, c *model.Call, _ callDocs) any { return t.nullTime(c.InitiatedAt) }},
	{"started_at", false, func(c *model.Call) any { return nullTimeDest{&c.StartedAt} }, func(t *tx, c *model.Call, _ callDocs) any { return t.nullTime(c.StartedAt) }},
	{"ended_at", false, func(c *model.Call) any { return nullTimeDest{&c.EndedAt} }, func(t *tx, c *model.Call, _ callDocs) any { return t.nullTime(c.EndedAt) }},
	{"duration_seconds", false, func(c *model.Call) any { return &c.DurationSeconds }, func(_ *tx, c *model.Call, _ callDocs) any { return c.DurationSeconds }},
	{"pre_call_webhook_status", false, func(c *model.Call) any { return &c.PreCallWebhookStatus }, func(_ *tx, c *model.Call, _ callDocs) any { return c.PreCallWebhookStatus }},
	{"post_call_webhook_status", false, func(c *model.Call) any { return &c.PostCallWebhookStatus }, func(_ *tx, c *model.Call, _ callDocs) any { return c.PostCallWebhookStatus }},
	{"post_call_webhook_url", false, func(c *model.Call) any { return &c.PostCallWebhookURL }, func(_ *tx, c *model.Call, _ callDocs) any { return c.PostCallWebhookURL }},
	{"lease_owner", false, func(c *model.Call) any { return &c.LeaseOwner }, func(_ *tx, c *model.Call, _ callDocs) any { return c.LeaseOwner }},
	{"lease_expires_at", false, func(c *model.Call) any { return nullTimeDest{&c.LeaseExpiresAt} }, func(t *tx, c *model.Call, _ callDocs) any { return t.nullTime(c.LeaseExpiresAt) }},
	{"created_at", false, func(c *model.Call) any { return timeDest{&c.CreatedAt} }, func(t *tx, c *model.Call, _ callDocs) any { return t.time(c.CreatedAt) }},
	{"updated_at", false, func(c *model.Call) any { return timeDest{&c.UpdatedAt} }, func(t *tx, c *model.Call, _ callDocs) any { return t.time(c.UpdatedAt) }},
	{"reserves_line", false, func(c *model.Call) any { return &c.ReservesLine }, func(_ *tx, c *model.Call, _ callDocs) any { return c.ReservesLine }},
	{"loopback_caller_id", false, func(c *model.Call) any { return &c.LoopbackCallerID }, func(_ *tx, c *model.Call, _ callDocs) any { return c.LoopbackCallerID }},
	{"campaign_id", false, func(c *model.Call) any { return &c.CampaignID }, func(_ *tx, c *model.Call, _ callDocs) any { return c.CampaignID }},
}

// createdOnly reports whether UpdateCall and ChangeCall leave a column
// alone: the keys, created_at and the campaign that placed the call never
// change; the transcript changes only through AppendTranscript (so a
// status change never overwrites entries appended meanwhile), and
// reserves_line only through ReleaseReservedLine
// (a writer that read the call before the release must not bring the
// reservation back: the live count would hold a line nobody uses).
func createdOnly(column string) bool {
	switch column {
	case "id", "org_id", "created_at", "campaign_id", "transcript", "reserves_line":
		return true
	}
	return false
}

// callSelect reads a whole call, and with minimal, a call without its big
// columns.
type callSelect struct {
	columns string // the select list, columns of c
	bare    string // the same columns unqualified, for RETURNING
	fields  []callField
}

var (
	fullCall    = newCallSelect(false)
	minimalCall = newCallSelect(true)
)

func newCallSelect(minimal bool) callSelect {
	var s callSelect
	cols := make([]string, 0, len(callFields))
	bare := make([]string, 0, len(callFields))
	for _, f := range callFields {
		if minimal && f.big {
			continue
		}
		s.fields = append(s.fields, f)
		cols = append(cols, "c."+f.column)
		bare = append(bare, f.column)
	}
	s.columns, s.bare = strings.Join(cols, ", "), strings.Join(bare, ", ")
	return s
}

func (s callSelect) scan(r rowScanner) (model.Call, error) {
	var c model.Call
	dest := make([]any, len(s.fields))
	for i, f := range s.fields {
		dest[i] = f.dest(&c)
	}
	err := r.Scan(dest...)
	return c, err
}

// liveStatuses is the SQL list of the statuses that hold a line, written as
// literals so both engines match the queries to the partial indexes on them
// (calls_live, calls_live_owner).
var liveStatuses = "('" + strings.Join(model.LiveCallStatuses, "', '") + "')"

// callWrite prepares c to be written and returns its JSON columns. What it
// changes is what reading the call back gives: times in UTC to the
// millisecond, CreatedAt (with create) and UpdatedAt now when unset, and
// empty documents rather than nil ones. Ids that are not UUIDs name nothing
// (PostgreSQL's uuid columns would refuse them), which is ErrNotFound.
func callWrite(c *model.Call, create bool) (callDocs, error) {
	if create {
		if c.ID == "" {
			c.ID = model.NewID()
		}
		c.CreatedAt = stamp(c.CreatedAt)
	}
	c.UpdatedAt = stamp(c.UpdatedAt)
	for _, p := range []**time.Time{&c.InitiatedAt, &c.StartedAt, &c.EndedAt, &c.LeaseExpiresAt} {
		if *p != nil {
			v := (*p).UTC().Truncate(time.Millisecond)
			*p = &v
		}
	}
	if c.Variables == nil {
		c.Variables = map[string]any{}
	}
	if c.Transcript == nil {
		c.Transcript = []map[string]any{}
	}
	if c.Metrics == nil {
		c.Metrics = map[string]any{}
	}
	if !uuids(c.ID, c.OrgID, c.AgentID) {
		return callDocs{}, notFound("call %s: organization %s, agent %s", c.ID, c.OrgID, c.AgentID)
	}
	for name, id := range map[string]*string{"sip trunk": c.SIPTrunkID, "dialed agent": c.DialedAgentID,
		"loopback caller": c.LoopbackCallerID, "campaign": c.CampaignID} {
		if id != nil && !uuids(*id) {
			return callDocs{}, notFound("call %s: %s %s", c.ID, name, *id)
		}
	}
	var d callDocs
	var err error
	if d.variables, err = document(c.Variables); err != nil {
		return d, fmt.Errorf("call %s variables: %w", c.ID, err)
	}
	if d.transcript, err = document(c.Transcript); err != nil {
		return d, fmt.Errorf("call %s transcript: %w", c.ID, err)
	}
	if d.metrics, err = document(c.Metrics); err != nil {
		return d, fmt.Errorf("call %s metrics: %w", c.ID, err)
	}
	return d, nil
}

// CreateCall inserts the call; an organization that does not exist is
// ErrNotFound. The agent and the SIP trunk are recorded, not referenced: the
// call outlives them.
func (t *tx) CreateCall(ctx context.Context, c *model.Call) error {
	d, err := callWrite(c, true)
	if err != nil {
		return fmt.Errorf("create %w", err)
	}
	cols := make([]string, len(callFields))
	args := make([]any, len(callFields))
	for i, f := range callFields {
		cols[i] = f.column
		args[i] = f.value(t, c, d)
	}
	_, err = t.exec(ctx, `INSERT INTO calls (`+strings.Join(cols, ", ")+`) VALUES (`+placeholders(len(cols))+`)`, args...)
	if err != nil {
		return t.fail(err, "create call %s", c.ID)
	}
	return nil
}

// callUpdate is the SET list of UpdateCall: every column but the
// createdOnly ones.
var callUpdate = func() string {
	var set []string
	for _, f := range callFields {
		if !createdOnly(f.column) {
			set = append(set, f.column+" = ?")
		}
	}
	return strings.Join(set, ", ")
}()

// UpdateCall writes every field of c but its creation time (found by OrgID
// and ID).
func (t *tx) UpdateCall(ctx context.Context, c *model.Call) error {
	if !uuids(c.OrgID, c.ID) {
		return notFound("update call %s", c.ID)
	}
	d, err := callWrite(c, false)
	if err != nil {
		return fmt.Errorf("update %w", err)
	}
	var args []any
	for _, f := range callFields {
		if !createdOnly(f.column) {
			args = append(args, f.value(t, c, d))
		}
	}
	return t.change(ctx, "update call "+c.ID,
		`UPDATE calls SET `+callUpdate+` WHERE org_id = ? AND id = ?`, append(args, c.OrgID, c.ID)...)
}

// ChangeCall writes the columns whose written value differs between before
// and after (compared as the values bound to the query, documents as their
// JSON), found by after's OrgID and ID. SQLite rewrites the index entries
// of every column an UPDATE sets, changed or not; a lifecycle step changes
// three to ten of the thirty.
func (t *tx) ChangeCall(ctx context.Context, before, after *model.Call) error {
	if !uuids(after.OrgID, after.ID) {
		return notFound("update call %s", after.ID)
	}
	set, args, err := t.changedColumns(before, after)
	if err != nil || len(set) == 0 {
		return err
	}
	return t.change(ctx, "update call "+after.ID,
		`UPDATE calls SET `+strings.Join(set, ", ")+` WHERE org_id = ? AND id = ?`, append(args, after.OrgID, after.ID)...)
}

// ChangeCallFrom is ChangeCall guarded by the status the writer last saw,
// returning the row as it stands after the write: UPDATE … RETURNING, so
// neither a locked read before it nor a read after it.
func (t *tx) ChangeCallFrom(ctx context.Context, before, after *model.Call) (model.Call, bool, error) {
	if !uuids(after.OrgID, after.ID) {
		return model.Call{}, false, nil
	}
	set, args, err := t.changedColumns(before, after)
	if err != nil {
		return model.Call{}, false, err
	}
	if len(set) == 0 {
		set = []string{"updated_at = updated_at"} // nothing to write, but the row to return
	}
	c, err := fullCall.scan(t.queryRow(ctx, `UPDATE calls SET `+strings.Join(set, ", ")+` WHERE org_id = ? AND id = ? AND status = ?
		RETURNING `+fullCall.bare, append(args, after.OrgID, after.ID, before.Status)...))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return model.Call{}, false, nil
	case err != nil:
		return model.Call{}, false, t.fail(err, "update call %s", after.ID)
	}
	return c, true, nil
}

// changedColumns is the SET list ("column = ?") of the columns a writer may
// change whose value differs between before and after, with their values.
func (t *tx) changedColumns(before, after *model.Call) ([]string, []any, error) {
	old := *before
	od, err := callWrite(&old, false)
	if err != nil {
		return nil, nil, fmt.Errorf("update %w", err)
	}
	nd, err := callWrite(after, false)
	if err != nil {
		return nil, nil, fmt.Errorf("update %w", err)
	}
	var set []string
	var args []any
	for _, f := range callFields {
		if createdOnly(f.column) {
			continue
		}
		v := f.value(t, after, nd)
		if reflect.DeepEqual(v, f.value(t, &old, od)) {
			continue
		}
		set = append(set, f.column+" = ?")
		args = append(args, v)
	}
	return set, args, nil
}

// AppendTranscript adds entries to the end of a call's transcript, setting
// each one's seq to its index. The row is locked while it is read and
// written, so concurrent appends all land, numbered in landing order.
//
// The entries are spliced onto the stored JSON text: nothing already
// written is decoded or encoded again, so an append costs the same at a
// long call's 400th entry as at its first (it decoded and re-encoded the
// whole transcript, which made every turn of a call dearer than the last).
func (t *tx) AppendTranscript(ctx context.Context, orgID, id string, entries []map[string]any, at time.Time) error {
	if !uuids(orgID, id) {
		return notFound("append to call %s", id)
	}
	var cur []byte
	var n int
	err := t.queryRow(ctx, `SELECT transcript, json_array_length(transcript) FROM calls WHERE org_id = ? AND id = ?`+t.forUpdate(false), orgID, id).
		Scan(&cur, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("append to call %s", id)
	}
	if err != nil {
		return t.fail(err, "append to call %s", id)
	}
	doc, err := appendDocument(cur, n, entries)
	if err != nil {
		return fmt.Errorf("call %s transcript: %w", id, err)
	}
	return t.change(ctx, "append to call "+id,
		`UPDATE calls SET transcript = ?, updated_at = ? WHERE org_id = ? AND id = ?`, doc, t.time(at), orgID, id)
}

// appendDocument is the JSON array text cur, of n elements, with entries
// added at its end, numbered (seq) from n; the caller's maps stay as they
// were.
func appendDocument(cur []byte, n int, entries []map[string]any) (string, error) {
	body := bytes.TrimSpace(cur)
	if len(body) < 2 || body[0] != '[' || body[len(body)-1] != ']' {
		return "", errors.New("the stored transcript is not a JSON array")
	}
	var b strings.Builder
	b.Grow(len(body) + 256*len(entries))
	b.Write(body[:len(body)-1])
	for i, e := range entries {
		e = maps.Clone(e)
		e["seq"] = n + i // the order they landed in, whoever appended
		j, err := json.Marshal(e)
		if err != nil {
			return "", fmt.Errorf("encode entry: %w", err)
		}
		if n+i > 0 {
			b.WriteByte(',')
		}
		b.Write(j)
	}
	b.WriteByte(']')
	return b.String(), nil
}

func (t *tx) GetCall(ctx context.Context, orgID, id string) (model.Call, error) {
	if !uuids(orgID, id) {
		return model.Call{}, notFound("get call %s", id)
	}
	return get(ctx, t, fullCall.scan, "get call "+id,
		`SELECT `+fullCall.columns+` FROM calls c WHERE c.org_id = ? AND c.id = ?`, orgID, id)
}

// GetCallForUpdate reads the call and, in a write transaction on
// PostgreSQL, locks its row until the transaction ends.
func (t *tx) GetCallForUpdate(ctx context.Context, orgID, id string) (model.Call, error) {
	if !uuids(orgID, id) {
		return model.Call{}, notFound("get call %s for update", id)
	}
	return get(ctx, t, fullCall.scan, "get call "+id+" for update",
		`SELECT `+fullCall.columns+` FROM calls c WHERE c.org_id = ? AND c.id = ?`+t.forUpdate(false), orgID, id)
}

// SetPostCallWebhookStatus writes the one column, so it needs no lock and
// cannot undo what another writer changed in the row.
func (t *tx) SetPostCallWebhookStatus(ctx context.Context, orgID, id, status string) error {
	if !uuids(orgID, id) {
		return notFound("set post-call webhook status of call %s", id)
	}
	return t.change(ctx, "set post-call webhook status of call "+id,
		`UPDATE calls SET post_call_webhook_status = ? WHERE org_id = ? AND id = ?`, status, orgID, id)
}

func (t *tx) GetCalls(ctx context.Context, orgID string, ids []string) ([]model.Call, error) {
	out := []model.Call{}
	if !uuids(orgID) {
		return out, nil
	}
	err := uuidBatches(ids, func(batch []any, marks string) error {
		found, err := all(ctx, t, fullCall.scan, "get calls",
			`SELECT `+fullCall.columns+` FROM calls c WHERE c.org_id = ? AND c.id IN (`+marks+`)`,
			append([]any{orgID}, batch...)...)
		out = append(out, found...)
		return err
	})
	return out, err
}

// ListCalls filters and sorts the organization's calls as f says. The folder
// filter looks at the call's agent as it is now, so calls whose agent was
// deleted never match it, not even FolderNone.
func (t *tx) ListCalls(ctx context.Context, orgID string, f store.CallFilter) ([]model.Call, int, error) {
	none := func() ([]model.Call, int, error) { return []model.Call{}, 0, nil }
	if !uuids(orgID) {
		return none()
	}
	const unfiltered = "c.org_id = ?"
	where, args := unfiltered, []any{orgID}
	if len(f.Statuses) > 0 {
		where += " AND c.status IN (" + placeholders(len(f.Statuses)) + ")"
		for _, s := range f.Statuses {
			args = append(args, s)
		}
	}
	if f.Direction != "" {
		where += " AND c.direction = ?"
		args = append(args, f.Direction)
	}
	if f.AgentID != "" {
		if !uuids(f.AgentID) {
			return none()
		}
		where += " AND c.agent_id = ?"
		args = append(args, f.AgentID)
	}
	if f.FolderID != "" {
		clause, fargs, ok := inFolder("c.agent_id", orgID, f.FolderID)
		if !ok {
			return none()
		}
		where += clause
		args = append(args, fargs...)
	}
	if f.SIPTrunkID != "" {
		if !uuids(f.SIPTrunkID) {
			return none()
		}
		where += " AND c.sip_trunk_id = ?"
		args = append(args, f.SIPTrunkID)
	}
	if f.CampaignID != "" {
		if !uuids(f.CampaignID) {
			return none()
		}
		where += " AND c.campaign_id = ?"
		args = append(args, f.CampaignID)
	}
	if f.FromNumber != "" {
		where += " AND c.from_number = ?"
		args = append(args, f.FromNumber)
	}
	if f.ToNumber != "" {
		where += " AND c.to_number = ?"
		args = append(args, f.ToNumber)
	}
	if !f.CreatedFrom.IsZero() {
		// Stored times are whole milliseconds: the first one at or after
		// CreatedFrom is CreatedFrom rounded up.
		from := stamp(f.CreatedFrom)
		if from.Before(f.CreatedFrom) {
			from = from.Add(time.Millisecond)
		}
		where += " AND c.created_at >= ?"
		args = append(args, t.time(from))
	}
	if !f.CreatedTo.IsZero() {
		where += " AND c.created_at <= ?"
		args = append(args, t.time(f.CreatedTo))
	}
	sel := fullCall
	if f.Minimal {
		sel = minimalCall
	}
	l := listing{
		columns: sel.columns,
		from:    "calls c",
		where:   where,
		args:    args,
		order:   callOrder(f.SortBy, f.SortDir),
		page:    f.Page,
	}
	if f.Query != "" {
		if ids, count, sargs, ok := t.d.CallSearch(orgID, f.Query); ok {
			return t.searchCalls(ctx, orgID, f.Query, l, callSearch{ids, count, sargs}, where != unfiltered, sel.scan)
		}
		if stmt := t.d.CustomPlans(); stmt != "" {
			if _, err := t.exec(ctx, stmt); err != nil {
				return nil, 0, t.fail(err, "list calls")
			}
		}
		like, largs := queryFilter(f.Query)
		l.where += like
		l.args = append(l.args, largs...)
	}
	switch {
	case where == unfiltered && f.Query == "":
		// No filter: the organization's count, kept by the schema's
		// triggers, is the total, and no call has to be counted.
		l.total = `SELECT COALESCE((SELECT calls FROM call_counts WHERE org_id = ?), 0)`
	case f.Query != "" && f.CreatedFrom.IsZero():
		// Counting a q filter that no search index answers (on SQLite, a q
		// shorter than a trigram) reads every call the other filters let
		// through. A bound on created_at that every call meets makes SQLite
		// read them through an index in created_at order, about the order
		// they are stored in, rather than through whichever index on org_id
		// its planner picks among equals, whose order may jump about the
		// table (seconds instead of one pass, for a million calls).
		// PostgreSQL's statistics see through the bound. The page itself is
		// left alone, to be read in the order of its sort key.
		l.total = "SELECT count(*) FROM calls c WHERE " + l.where + " AND c.created_at >= ?"
		l.totalArgs = append(l.args[:len(l.args):len(l.args)], t.d.Time(time.Time{}))
	}
	return list(ctx, t, l, sel.scan, "list calls")
}

// callOrder is the ORDER BY of a call list. A nullable key sorts its nulls
// last in both directions, written portably as (key IS NULL) first; the
// calls_org_started, _ended and _duration indexes (one per direction) hold
// exactly that expression, so either order reads an index in order. Status and
// direction are byte-ordered on both engines (COLLATE "C" columns on
// PostgreSQL). Ties break by id in the sort direction.
func callOrder(sortBy, sortDir string) string {
	dir := direction(sortDir)
	key, nullable := "c.created_at", false
	switch sortBy {
	case store.CallSortStartedAt:
		key, nullable = "c.started_at", true
	case store.CallSortEndedAt:
		key, nullable = "c.ended_at", true
	case store.CallSortDurationSeconds:
		key, nullable = "c.duration_seconds", true
	case store.CallSortStatus:
		key = "c.status"
	case store.CallSortDirection:
		key = "c.direction"
	}
	order := fmt.Sprintf("%s %s, c.id %s", key, dir, dir)
	if nullable {
		order = "(" + key + " IS NULL), " + order
	}
	return order
}

// LockOrg reads the organization, locking its row until the transaction
// ends on PostgreSQL, so admission decisions for one organization take
// turns; SQLite's single writer already makes them.
func (t *tx) LockOrg(ctx context.Context, orgID string) (model.Organization, error) {
	if !uuids(orgID) {
		return model.Organization{}, notFound("lock organization %s", orgID)
	}
	return get(ctx, t, scanOrg, "lock organization "+orgID,
		`SELECT `+orgColumns+` FROM organizations WHERE id = ?`+t.forUpdate(false), orgID)
}

// CountLiveCalls reads the organization's live count, which the schema's
// triggers keep (migration 00009) as calls enter and leave the live
// statuses.
func (t *tx) CountLiveCalls(ctx context.Context, orgID string) (int, error) {
	if !uuids(orgID) {
		return 0, nil
	}
	return t.count(ctx, "count live calls",
		`SELECT COALESCE((SELECT live FROM call_counts WHERE org_id = ?), 0)`, orgID)
}

// CountLines reads the live count and probes the calls_queued index for one
// queued call. On PostgreSQL it must be its own statement after LockOrg's:
// a statement that waited for the organization's lock would read with the
// snapshot it started with, before the previous holder's admission.
func (t *tx) CountLines(ctx context.Context, orgID string) (store.Lines, error) {
	var l store.Lines
	if !uuids(orgID) {
		return l, nil
	}
	err := t.queryRow(ctx, `SELECT COALESCE((SELECT live FROM call_counts WHERE org_id = ?), 0),
		EXISTS (SELECT 1 FROM calls c WHERE c.org_id = ? AND c.status = '`+model.CallQueued+`')`, orgID, orgID).
		Scan(&l.Live, &l.Queued)
	if err != nil {
		return l, t.fail(err, "count lines of organization %s", orgID)
	}
	return l, nil
}

// ReleaseReservedLine clears the reservation of a live call; the schema's
// trigger takes the line off the organization's live count.
func (t *tx) ReleaseReservedLine(ctx context.Context, orgID, callID string) (bool, error) {
	if !uuids(orgID, callID) {
		return false, nil
	}
	res, err := t.exec(ctx, `UPDATE calls SET reserves_line = ? WHERE org_id = ? AND id = ? AND reserves_line AND status IN `+liveStatuses,
		false, orgID, callID)
	if err != nil {
		return false, t.fail(err, "release the line call %s reserves", callID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("release the line call %s reserves: rows affected: %w", callID, err)
	}
	return n > 0, nil
}

// GetCallByLoopbackCaller reads the inbound leg callerID placed; there is
// at most one (a caller dials once).
func (t *tx) GetCallByLoopbackCaller(ctx context.Context, orgID, callerID string) (model.Call, error) {
	if !uuids(orgID, callerID) {
		return model.Call{}, notFound("get the call of loopback caller %s", callerID)
	}
	return get(ctx, t, fullCall.scan, "get the call of loopback caller "+callerID,
		`SELECT `+fullCall.columns+` FROM calls c WHERE c.org_id = ? AND c.loopback_caller_id = ?
		ORDER BY c.created_at, c.id LIMIT 1`, orgID, callerID)
}

// OldestQueuedCalls returns the head of the organization's queue. In a write
// transaction on PostgreSQL the rows are locked, and rows another
// transaction holds (a cancel in flight) are passed over.
func (t *tx) OldestQueuedCalls(ctx context.Context, orgID string, n int) ([]model.Call, error) {
	if !uuids(orgID) || n <= 0 {
		return []model.Call{}, nil
	}
	return all(ctx, t, fullCall.scan, "list queued calls",
		`SELECT `+fullCall.columns+` FROM calls c WHERE c.org_id = ? AND c.status = '`+model.CallQueued+`'
		ORDER BY c.created_at, c.id LIMIT ?`+t.forUpdate(true), orgID, n)
}

// OrgsWithQueuedCalls returns the organizations' ids in byte order.
func (t *tx) OrgsWithQueuedCalls(ctx context.Context) ([]string, error) {
	scan := func(r rowScanner) (string, error) {
		var id string
		err := r.Scan(&id)
		return id, err
	}
	return all(ctx, t, scan, "list organizations with queued calls",
		`SELECT DISTINCT c.org_id FROM calls c WHERE c.status = '`+model.CallQueued+`' ORDER BY c.org_id`)
}

// RenewLeases moves the lease of those of ids that owner holds live to
// until. It leaves updated_at alone: a lease is bookkeeping, not a change to
// the call. An empty owner owns nothing.
func (t *tx) RenewLeases(ctx context.Context, owner string, ids []string, until time.Time) (int, error) {
	return t.renewLeases(ctx, "calls", "status IN "+liveStatuses, owner, ids, until)
}

// renewLeases moves the lease of those of ids in table that owner holds
// and that match live to until.
func (t *tx) renewLeases(ctx context.Context, table, live, owner string, ids []string, until time.Time) (int, error) {
	if owner == "" {
		return 0, nil
	}
	renewed := 0
	err := uuidBatches(ids, func(batch []any, marks string) error {
		res, err := t.exec(ctx, `UPDATE `+table+` SET lease_expires_at = ? WHERE lease_owner = ? AND `+live+`
			AND id IN (`+marks+`)`, append([]any{t.time(until), owner}, batch...)...)
		if err != nil {
			return t.fail(err, "renew %s leases of %s", table, owner)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("renew %s leases of %s: rows affected: %w", table, owner, err)
		}
		renewed += int(n)
		return nil
	})
	return renewed, err
}

// ExpiredLiveCalls returns, oldest first, live calls whose lease expired
// before now, that have no lease at all (nobody is running them), or, when
// owner is not empty, that owner holds and is not running. In a write
// transaction on PostgreSQL they are locked and rows another transaction
// holds are passed over, so two servers reaping at once never both take a
// call.
func (t *tx) ExpiredLiveCalls(ctx context.Context, owner string, running []string, now time.Time, n int) ([]model.Call, error) {
	if n <= 0 {
		return []model.Call{}, nil
	}
	lost, args := "c.lease_expires_at IS NULL OR c.lease_expires_at < ?", []any{t.time(now)}
	if owner != "" {
		lost += " OR (c.lease_owner = ?"
		args = append(args, owner)
		if ids := uuidArgs(running); len(ids) > 0 {
			lost += " AND c.id NOT IN (" + placeholders(len(ids)) + ")"
			args = append(args, ids...)
		}
		lost += ")"
	}
	return all(ctx, t, fullCall.scan, "list expired live calls",
		`SELECT `+fullCall.columns+` FROM calls c WHERE c.status IN `+liveStatuses+` AND (`+lost+`)
		ORDER BY c.created_at, c.id LIMIT ?`+t.forUpdate(true), append(args, n)...)
}

// PendingPostCallWebhooks is the post-call webhook outbox, oldest ended
// first; locked as ExpiredLiveCalls's rows are.
func (t *tx) PendingPostCallWebhooks(ctx context.Context, n int) ([]model.Call, error) {
	if n <= 0 {
		return []model.Call{}, nil
	}
	return all(ctx, t, fullCall.scan, "list pending post-call webhooks",
		`SELECT `+fullCall.columns+` FROM calls c
		WHERE c.post_call_webhook_url IS NOT NULL AND c.post_call_webhook_status IS NULL AND c.ended_at IS NOT NULL
		ORDER BY c.ended_at, c.id LIMIT ?`+t.forUpdate(true), n)
}

// inFolder is the filter " AND <agentColumn> IN (agents of the folder)" for
// folderID (a folder id or store.FolderNone) and its arguments; ok is false
// when folderID names no possible folder (nothing can match). A semi-join:
// rows whose agent is gone match no folder, not even FolderNone. (As a
// plain JOIN, SQLite counts by looking every row's agent up; this way it
// counts each agent's rows in its (org, agent, created) index. PostgreSQL
// plans both alike.)
func inFolder(agentColumn, orgID, folderID string) (clause string, args []any, ok bool) {
	in := " AND " + agentColumn + " IN (SELECT a.id FROM agents a WHERE a.org_id = ? AND a.folder_id "
	switch {
	case folderID == store.FolderNone:
		return in + "IS NULL)", []any{orgID}, true
	case uuids(folderID):
		return in + "= ?)", []any{orgID, folderID}, true
	}
	return "", nil, false
}
