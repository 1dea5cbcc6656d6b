package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// newMessage creates an outbound SMS of no agent, changed by mods.
func newMessage(t *testing.T, b *bundle, orgID string, mods ...func(*model.Message)) model.Message {
	t.Helper()
	m := model.Message{
		OrgID:          orgID,
		ConversationID: "conv",
		Channel:        model.ChannelSMS,
		Direction:      model.Outbound,
		FromNumber:     "+15550000001",
		ToNumber:       "+15551110001",
		Body:           "Hello",
		Status:         model.MessageQueued,
		CreatedAt:      at(0),
		UpdatedAt:      at(0),
	}
	for _, mod := range mods {
		mod(&m)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateMessage(b.ctx, &m) })
	return m
}

func getMessage(t *testing.T, b *bundle, orgID, id string) model.Message {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.Message, error) { return tx.GetMessage(b.ctx, orgID, id) })
}

func messageIDs(ms []model.Message) []string {
	return ids(ms, func(m model.Message) string { return m.ID })
}

// fullMessage sets every field of a message, with times that are not yet
// what the store keeps (another zone, sub-millisecond digits).
func fullMessage(orgID, agentID, callID string) model.Message {
	paris := time.FixedZone("CET", 3600)
	return model.Message{
		OrgID:                 orgID,
		AgentID:               &agentID,
		AgentName:             ptr("Receptionist ☎"),
		MessagingConnectionID: ptr("mc_0123"),
		CallID:                &callID,
		ConversationID:        "conv-ünïcødé",
		Channel:               model.ChannelSMS,
		Direction:             model.Outbound,
		FromNumber:            "+15550000001",
		ToNumber:              "+15551110001",
		Body:                  "Your table is booked — see you at 8 😀",
		Status:                model.MessageSent,
		ProviderMessageID:     ptr("SM123"),
		GeneratedByLLM:        true,
		ErrorMessage:          ptr("none really"),
		CreatedAt:             at(0).In(paris).Add(700 * time.Microsecond),
		UpdatedAt:             at(5).In(paris).Add(1500 * time.Microsecond),
	}
}

// Numbers of the message fleet: agents' lines and two counterparts.
const (
	aliceLine = "+15550000001"
	bobLine   = "+15550000002"
	goneLine  = "+15550000003"
	peerX     = "+15551110001"
	peerY     = "+15551110002"
)

// messageFleet is a set of messages built to tell filters apart.
type messageFleet struct {
	msgs             []model.Message // in creation order
	byTag            map[string]model.Message
	sales, support   model.Folder
	alice, bob, gone model.Agent // gone is deleted once its messages exist
	call             model.Call
}

// newMessageFleet creates, in org: messages of three agents (one in a
// folder, one without, one in a folder but deleted) and of none, in both
// directions and several statuses, some tied in creation time, some of a
// call; and in the other organization, messages matching every filter.
func newMessageFleet(t *testing.T, b *bundle) messageFleet {
	t.Helper()
	f := messageFleet{
		sales:   newFolder(t, b, b.org.ID, func(f *model.Folder) { f.Name = "Sales" }),
		support: newFolder(t, b, b.org.ID, func(f *model.Folder) { f.Name = "Support" }),
		byTag:   map[string]model.Message{},
	}
	f.alice = newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name, a.FolderID = "Alice", &f.sales.ID })
	f.bob = newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name = "Bob" })
	f.gone = newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name, a.FolderID = "Carol", &f.support.ID })
	f.call = newCall(t, b, b.org.ID, f.alice.ID)
	var noAgent model.Agent
	specs := []struct {
		tag       string
		agent     model.Agent
		direction string
		status    string
		from, to  string
		created   int
		call      bool
		conv      string
	}{
		{"m1", f.alice, model.Outbound, model.MessageSent, aliceLine, peerX, 1, true, "ca"},
		{"m2", f.alice, model.Inbound, model.MessageReceived, peerX, aliceLine, 2, false, "ca"},
		{"m3", f.bob, model.Outbound, model.MessageDelivered, bobLine, peerX, 3, false, "cb"},
		{"m4", f.bob, model.Outbound, model.MessageFailed, bobLine, peerY, 3, false, "cb2"},
		{"m5", f.gone, model.Inbound, model.MessageReceived, peerY, goneLine, 4, false, "cg"},
		{"m6", f.alice, model.Outbound, model.MessageQueued, aliceLine, peerY, 5, true, "ca2"},
		{"m7", noAgent, model.Inbound, model.MessageReceived, peerY, aliceLine, 5, false, "cn"},
		{"m8", f.alice, model.Outbound, model.MessageDelivered, aliceLine, peerX, 6, false, "ca"},
		{"m9", f.bob, model.Inbound, model.MessageReceived, peerX, bobLine, 7, false, "cb"},
		{"m10", f.gone, model.Outbound, model.MessageSent, goneLine, peerY, 7, false, "cg"},
	}
	for _, s := range specs {
		m := newMessage(t, b, b.org.ID, func(m *model.Message) {
			if s.agent.ID != "" {
				m.AgentID, m.AgentName = ptr(s.agent.ID), ptr(s.agent.Name)
			}
			m.Direction, m.Status, m.FromNumber, m.ToNumber = s.direction, s.status, s.from, s.to
			m.CreatedAt, m.UpdatedAt, m.ConversationID = at(s.created), at(s.created), s.conv
			m.Body = "body " + s.tag
			m.ProviderMessageID = ptr("SM-" + s.tag)
			if s.call {
				m.CallID = &f.call.ID
			}
		})
		f.msgs = append(f.msgs, m)
		f.byTag[s.tag] = m
	}
	// Never listed: another organization's messages, matching every filter.
	for _, s := range specs {
		newMessage(t, b, b.other.ID, func(m *model.Message) {
			if s.agent.ID != "" {
				m.AgentID, m.AgentName = ptr(s.agent.ID), ptr(s.agent.Name)
			}
			m.Direction, m.Status, m.FromNumber, m.ToNumber = s.direction, s.status, s.from, s.to
			m.CreatedAt, m.ConversationID, m.CallID = at(s.created+100), s.conv, &f.call.ID
			m.ProviderMessageID = ptr("SM-" + s.tag)
		})
	}
	b.update(t, func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, f.gone.ID) })
	return f
}

// oldestFirst is the ids of the fleet's messages that keep keeps (all
// with nil), oldest first: by creation time then id.
func (f messageFleet) oldestFirst(keep func(model.Message) bool) []string {
	var rows []created
	for _, m := range f.msgs {
		if keep == nil || keep(m) {
			rows = append(rows, created{m.ID, m.CreatedAt})
		}
	}
	return oldestFirst(rows)
}

func (f messageFleet) tags(tags ...string) func(model.Message) bool {
	return func(m model.Message) bool {
		for _, tag := range tags {
			if f.byTag[tag].ID == m.ID {
				return true
			}
		}
		return false
	}
}

func (f messageFleet) ids(tags ...string) []string {
	out := make([]string, len(tags))
	for i, tag := range tags {
		out[i] = f.byTag[tag].ID
	}
	return out
}

func listMessageRows(t *testing.T, b *bundle, orgID string, f store.MessageFilter) ([]model.Message, int) {
	t.Helper()
	var total int
	rows := read(t, b, func(tx store.Tx) ([]model.Message, error) {
		rows, n, err := tx.ListMessages(b.ctx, orgID, f)
		total = n
		return rows, err
	})
	if rows == nil {
		t.Fatal("ListMessages returned nil, want a slice")
	}
	return rows, total
}

func listMessages(t *testing.T, b *bundle, f store.MessageFilter) ([]string, int) {
	t.Helper()
	rows, total := listMessageRows(t, b, b.org.ID, f)
	return messageIDs(rows), total
}

var messageTests = []test{
	{"CRUD", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		c := newCall(t, b, b.org.ID, a.ID)
		m := fullMessage(b.org.ID, a.ID, c.ID)
		b.update(t, func(tx store.Tx) error { return tx.CreateMessage(b.ctx, &m) })
		// The caller's struct now holds what the store keeps.
		if !strings.HasPrefix(m.ID, "msg_") || len(m.ID) != len("msg_")+24 {
			t.Fatalf("id = %q, want msg_ and 24 characters", m.ID)
		}
		if want := at(5).Add(time.Millisecond); m.UpdatedAt != want || m.CreatedAt != at(0) {
			t.Fatalf("times = %v, %v; want %v, %v", m.CreatedAt, m.UpdatedAt, at(0), want)
		}
		wantEqual(t, m, getMessage(t, b, b.org.ID, m.ID))

		// Every optional field unset, and an id of the caller's.
		bare := newMessage(t, b, b.org.ID, func(m *model.Message) {
			m.ID, m.Direction, m.Status = "msg_mine", model.Inbound, model.MessageReceived
		})
		wantEqual(t, bare, getMessage(t, b, b.org.ID, "msg_mine"))
		if bare.AgentID != nil || bare.CallID != nil || bare.ProviderMessageID != nil || bare.GeneratedByLLM {
			t.Fatalf("bare message has optional fields: %+v", bare)
		}

		// Times unset are now.
		before := model.Now()
		now := model.Message{OrgID: b.org.ID, ConversationID: "c", Channel: model.ChannelSMS, Direction: model.Outbound,
			FromNumber: aliceLine, ToNumber: peerX, Status: model.MessageQueued}
		b.update(t, func(tx store.Tx) error { return tx.CreateMessage(b.ctx, &now) })
		if now.CreatedAt.Before(before) || now.UpdatedAt.Before(before) {
			t.Fatalf("times %v, %v before %v", now.CreatedAt, now.UpdatedAt, before)
		}
		wantEqual(t, now, getMessage(t, b, b.org.ID, now.ID))

		// Ids are unique; distinct ones are generated.
		dup := fullMessage(b.org.ID, a.ID, c.ID)
		dup.ID = m.ID
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateMessage(b.ctx, &dup) }), store.ErrConflict)
		if other := newMessage(t, b, b.org.ID); other.ID == m.ID || other.ID == now.ID {
			t.Fatalf("id %q given twice", other.ID)
		}

		// A missing organization, or ids that can name nothing.
		for _, mod := range []func(*model.Message){
			func(m *model.Message) { m.OrgID = model.NewID() },
			func(m *model.Message) { m.OrgID = "acme" },
			func(m *model.Message) { m.AgentID = ptr("alice") },
			func(m *model.Message) { m.CallID = ptr("call") },
		} {
			bad := fullMessage(b.org.ID, a.ID, c.ID)
			mod(&bad)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateMessage(b.ctx, &bad) }), store.ErrNotFound)
		}
	}},
	{"UpdateWritesOnlyItsFields", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		c := newCall(t, b, b.org.ID, a.ID)
		m := fullMessage(b.org.ID, a.ID, c.ID)
		m.Status, m.ProviderMessageID, m.ErrorMessage, m.Body = model.MessageQueued, nil, nil, ""
		b.update(t, func(tx store.Tx) error { return tx.CreateMessage(b.ctx, &m) })
		want := m

		// Every field changed; only status, provider id, error, body and
		// update time are written.
		u := model.Message{
			ID: m.ID, OrgID: m.OrgID, AgentID: ptr(model.NewID()), AgentName: ptr("other"),
			MessagingConnectionID: ptr("mc_other"), CallID: ptr(model.NewID()), ConversationID: "other",
			Channel: "mms", Direction: model.Inbound, FromNumber: "+1", ToNumber: "+2",
			Body: "Generated reply", Status: model.MessageFailed, ProviderMessageID: ptr("SM999"),
			GeneratedByLLM: false, ErrorMessage: ptr("30007 filtered"),
			CreatedAt: at(50), UpdatedAt: at(60).Add(300 * time.Microsecond),
		}
		b.update(t, func(tx store.Tx) error { return tx.UpdateMessage(b.ctx, &u) })
		want.Body, want.Status, want.ProviderMessageID, want.ErrorMessage, want.UpdatedAt =
			"Generated reply", model.MessageFailed, ptr("SM999"), ptr("30007 filtered"), at(60)
		wantEqual(t, want, getMessage(t, b, b.org.ID, m.ID))
		wantEqual(t, at(60), u.UpdatedAt)

		// And back to nil; an unset update time is now.
		before := model.Now()
		u2 := want
		u2.ProviderMessageID, u2.ErrorMessage, u2.Status, u2.UpdatedAt = nil, nil, model.MessageDelivered, time.Time{}
		b.update(t, func(tx store.Tx) error { return tx.UpdateMessage(b.ctx, &u2) })
		got := getMessage(t, b, b.org.ID, m.ID)
		if got.UpdatedAt.Before(before) {
			t.Fatalf("updatedAt %v before %v", got.UpdatedAt, before)
		}
		wantEqual(t, u2, got)

		for _, k := range []struct{ org, id string }{{b.other.ID, m.ID}, {b.org.ID, "msg_missing"}, {"acme", m.ID}} {
			bad := got
			bad.OrgID, bad.ID, bad.Status = k.org, k.id, model.MessageUndelivered
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateMessage(b.ctx, &bad) }), store.ErrNotFound)
		}
		wantEqual(t, got, getMessage(t, b, b.org.ID, m.ID))
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		m := newMessage(t, b, b.org.ID, func(m *model.Message) {
			m.AgentID, m.ProviderMessageID, m.ConversationID = &a.ID, ptr("SM1"), "conv"
		})
		for _, k := range []struct{ org, id string }{
			{b.other.ID, m.ID}, {model.NewID(), m.ID}, {"acme", m.ID}, {b.org.ID, "msg_missing"}, {b.org.ID, model.NewID()},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.Message, error) { return tx.GetMessage(b.ctx, k.org, k.id) }), store.ErrNotFound)
		}
		for _, org := range []string{b.other.ID, model.NewID(), "acme"} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.Message, error) {
				return tx.MessageByProviderID(b.ctx, org, "SM1")
			}), store.ErrNotFound)
			wantIs(t, readErr(b, func(tx store.Tx) (model.Message, error) {
				return tx.LastMessageBetween(b.ctx, org, a.ID, m.ToNumber)
			}), store.ErrNotFound)
			history := read(t, b, func(tx store.Tx) ([]model.Message, error) {
				return tx.ConversationMessages(b.ctx, org, "conv", 10)
			})
			wantEqual(t, []model.Message{}, history)
			n := read(t, b, func(tx store.Tx) (int, error) { return tx.CountMessagesSince(b.ctx, org, "", time.Time{}) })
			wantEqual(t, 0, n)
			rows, total := listMessageRows(t, b, org, store.MessageFilter{Page: page(10)})
			if len(rows) != 0 || total != 0 {
				t.Fatalf("org %s lists %d messages, total %d", org, len(rows), total)
			}
		}
		wantEqual(t, m, getMessage(t, b, b.org.ID, m.ID))
	}},
	{"Filters", func(t *testing.T, b *bundle) {
		fleet := newMessageFleet(t, b)
		tags := fleet.tags
		for _, c := range []struct {
			name string
			f    store.MessageFilter
			keep func(model.Message) bool
		}{
			{"all", store.MessageFilter{}, nil},
			{"agent", store.MessageFilter{AgentID: fleet.bob.ID}, tags("m3", "m4", "m9")},
			{"deleted agent", store.MessageFilter{AgentID: fleet.gone.ID}, tags("m5", "m10")},
			{"unknown agent", store.MessageFilter{AgentID: model.NewID()}, tags()},
			{"malformed agent", store.MessageFilter{AgentID: "bob"}, tags()},
			{"folder", store.MessageFilter{FolderID: fleet.sales.ID}, tags("m1", "m2", "m6", "m8")},
			{"folder of the deleted agent", store.MessageFilter{FolderID: fleet.support.ID}, tags()},
			{"no folder", store.MessageFilter{FolderID: store.FolderNone}, tags("m3", "m4", "m9")},
			{"unknown folder", store.MessageFilter{FolderID: model.NewID()}, tags()},
			{"malformed folder", store.MessageFilter{FolderID: "sales"}, tags()},
			{"call", store.MessageFilter{CallID: fleet.call.ID}, tags("m1", "m6")},
			{"unknown call", store.MessageFilter{CallID: model.NewID()}, tags()},
			{"malformed call", store.MessageFilter{CallID: "call"}, tags()},
			{"inbound", store.MessageFilter{Direction: model.Inbound}, tags("m2", "m5", "m7", "m9")},
			{"outbound", store.MessageFilter{Direction: model.Outbound}, tags("m1", "m3", "m4", "m6", "m8", "m10")},
			{"direction is exact", store.MessageFilter{Direction: "inbound"}, tags()},
			{"status", store.MessageFilter{Status: model.MessageDelivered}, tags("m3", "m8")},
			{"status received", store.MessageFilter{Status: model.MessageReceived}, tags("m2", "m5", "m7", "m9")},
			{"status none", store.MessageFilter{Status: "bogus"}, tags()},
			{"agent and direction", store.MessageFilter{AgentID: fleet.alice.ID, Direction: model.Outbound}, tags("m1", "m6", "m8")},
			{"folder and status", store.MessageFilter{FolderID: store.FolderNone, Status: model.MessageReceived}, tags("m9")},
			{"call and status", store.MessageFilter{CallID: fleet.call.ID, Status: model.MessageQueued}, tags("m6")},
			{"agent of another folder", store.MessageFilter{AgentID: fleet.bob.ID, FolderID: fleet.sales.ID}, tags()},
			{"everything", store.MessageFilter{
				AgentID: fleet.alice.ID, FolderID: fleet.sales.ID, CallID: fleet.call.ID,
				Direction: model.Outbound, Status: model.MessageSent,
			}, tags("m1")},
			{"everything, one off", store.MessageFilter{
				AgentID: fleet.alice.ID, FolderID: fleet.sales.ID, CallID: fleet.call.ID,
				Direction: model.Inbound, Status: model.MessageSent,
			}, tags()},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := c.f
				want := reversed(fleet.oldestFirst(c.keep))
				got, total := listMessages(t, b, f)
				wantEqual(t, want, got, cmpopts.EquateEmpty())
				wantEqual(t, len(want), total)
				// The total counts the filtered rows, not the page.
				f.Page = store.Page{Number: 2, Size: 2, SortDir: store.Asc}
				got, total = listMessages(t, b, f)
				wantEqual(t, len(want), total)
				asc := reversed(want)
				wantEqual(t, asc[min(2, len(asc)):min(4, len(asc))], got, cmpopts.EquateEmpty())
			})
		}
	}},
	{"Pages", func(t *testing.T, b *bundle) {
		fleet := newMessageFleet(t, b)
		list := func(f store.MessageFilter) func(store.Page) ([]string, int) {
			return func(p store.Page) ([]string, int) {
				f.Page = p
				return listMessages(t, b, f)
			}
		}
		checkPaging(t, fleet.oldestFirst(nil), list(store.MessageFilter{}))
		outbound := func(m model.Message) bool { return m.Direction == model.Outbound }
		checkPaging(t, fleet.oldestFirst(outbound), list(store.MessageFilter{Direction: model.Outbound}))
		checkPaging(t, nil, list(store.MessageFilter{Status: "bogus"}))
	}},
	{"NewestFirstTies", func(t *testing.T, b *bundle) {
		// Spelled out: messages created at once come by id, in the list's
		// direction.
		var rows []created
		for _, id := range []string{"msg_b", "msg_C", "msg_a", "msg_c"} {
			m := newMessage(t, b, b.org.ID, func(m *model.Message) { m.ID, m.CreatedAt = id, at(1) })
			rows = append(rows, created{m.ID, m.CreatedAt})
		}
		newMessage(t, b, b.org.ID, func(m *model.Message) { m.ID, m.CreatedAt = "msg_0", at(2) })
		got, _ := listMessages(t, b, store.MessageFilter{})
		wantEqual(t, []string{"msg_0", "msg_c", "msg_b", "msg_a", "msg_C"}, got)
		got, _ = listMessages(t, b, store.MessageFilter{Page: store.Page{SortDir: store.Asc}})
		wantEqual(t, []string{"msg_C", "msg_a", "msg_b", "msg_c", "msg_0"}, got)
	}},
	{"Records", func(t *testing.T, b *bundle) {
		fleet := newMessageFleet(t, b)
		rows, _ := listMessageRows(t, b, b.org.ID, store.MessageFilter{Page: store.Page{SortDir: store.Asc}, Direction: model.Outbound})
		want := map[string]model.Message{}
		for _, m := range fleet.msgs {
			want[m.ID] = m
		}
		for _, got := range rows {
			wantEqual(t, want[got.ID], got)
		}
	}},
	{"ConversationMessages", func(t *testing.T, b *bundle) {
		fleet := newMessageFleet(t, b)
		history := func(conv string, limit int) []string {
			return messageIDs(read(t, b, func(tx store.Tx) ([]model.Message, error) {
				return tx.ConversationMessages(b.ctx, b.org.ID, conv, limit)
			}))
		}
		wantEqual(t, fleet.ids("m1", "m2", "m8"), history("ca", 10))
		wantEqual(t, fleet.ids("m1", "m2", "m8"), history("ca", 3))
		wantEqual(t, fleet.ids("m2", "m8"), history("ca", 2)) // the newest, oldest first
		wantEqual(t, fleet.ids("m8"), history("ca", 1))
		wantEqual(t, fleet.ids("m3", "m9"), history("cb", 5))
		wantEqual(t, fleet.ids("m5", "m10"), history("cg", 5)) // the agent's deletion keeps them
		wantEqual(t, []string{}, history("ca", 0))
		wantEqual(t, []string{}, history("nobody", 10))
		// Ties come by id, oldest first.
		var rows []created
		for range 4 {
			m := newMessage(t, b, b.org.ID, func(m *model.Message) { m.ConversationID, m.CreatedAt = "tied", at(9) })
			rows = append(rows, created{m.ID, m.CreatedAt})
		}
		want := oldestFirst(rows)
		wantEqual(t, want, history("tied", 4))
		wantEqual(t, want[1:], history("tied", 3))
		// Whole records.
		got := read(t, b, func(tx store.Tx) ([]model.Message, error) {
			return tx.ConversationMessages(b.ctx, b.org.ID, "cb", 5)
		})
		wantEqual(t, []model.Message{fleet.byTag["m3"], fleet.byTag["m9"]}, got)
	}},
	{"LastMessageBetween", func(t *testing.T, b *bundle) {
		fleet := newMessageFleet(t, b)
		last := func(agentID, counterpart string) (model.Message, error) {
			var m model.Message
			err := b.view(func(tx store.Tx) (err error) {
				m, err = tx.LastMessageBetween(b.ctx, b.org.ID, agentID, counterpart)
				return err
			})
			return m, err
		}
		for _, c := range []struct {
			name, agentID, counterpart, want string
		}{
			{"outbound is newest", fleet.alice.ID, peerX, "m8"},
			{"outbound only", fleet.alice.ID, peerY, "m6"}, // m7, from peerY to alice's line, is of no agent
			{"inbound is newest", fleet.bob.ID, peerX, "m9"},
			{"outbound of the other agent", fleet.bob.ID, peerY, "m4"},
			{"inbound only", fleet.gone.ID, peerY, "m10"},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, err := last(c.agentID, c.counterpart)
				if err != nil {
					t.Fatal(err)
				}
				wantEqual(t, fleet.byTag[c.want], got)
			})
		}
		// Inbound only: a new agent hears from a number first.
		carol := newAgent(t, b, b.org.ID)
		in := newMessage(t, b, b.org.ID, func(m *model.Message) {
			m.AgentID, m.Direction, m.Status, m.FromNumber, m.ToNumber, m.CreatedAt =
				&carol.ID, model.Inbound, model.MessageReceived, peerY, goneLine, at(20)
		})
		got, err := last(carol.ID, peerY)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, in, got)
		// The agent's own line is not a counterpart: the counterpart is the
		// sender of an inbound message and the recipient of an outbound one.
		for _, k := range []struct{ agentID, counterpart string }{
			{fleet.alice.ID, aliceLine}, {carol.ID, goneLine}, {carol.ID, peerX},
			{model.NewID(), peerX}, {"alice", peerX},
		} {
			_, err := last(k.agentID, k.counterpart)
			wantIs(t, err, store.ErrNotFound)
		}
	}},
	{"CountMessagesSince", func(t *testing.T, b *bundle) {
		newMessageFleet(t, b) // outbound: m1@1 X, m3@3 X, m4@3 Y, m6@5 Y, m8@6 X, m10@7 Y
		count := func(to string, since time.Time) int {
			return read(t, b, func(tx store.Tx) (int, error) { return tx.CountMessagesSince(b.ctx, b.org.ID, to, since) })
		}
		wantEqual(t, 6, count("", time.Time{}))
		wantEqual(t, 6, count("", at(1)))
		wantEqual(t, 5, count("", at(1).Add(time.Microsecond))) // since is inclusive, to the microsecond
		wantEqual(t, 5, count("", at(3)))
		wantEqual(t, 3, count("", at(4).In(time.FixedZone("X", -5*3600))))
		wantEqual(t, 1, count("", at(7)))
		wantEqual(t, 0, count("", at(8)))
		wantEqual(t, 3, count(peerX, time.Time{}))
		wantEqual(t, 2, count(peerX, at(2)))
		wantEqual(t, 1, count(peerX, at(6)))
		wantEqual(t, 2, count(peerY, at(5)))
		wantEqual(t, 0, count(aliceLine, time.Time{})) // inbound messages to it are not counted
		wantEqual(t, 0, count("+19999999999", time.Time{}))
	}},
	{"MessageByProviderID", func(t *testing.T, b *bundle) {
		fleet := newMessageFleet(t, b)
		byProvider := func(id string) (model.Message, error) {
			var m model.Message
			err := b.view(func(tx store.Tx) (err error) {
				m, err = tx.MessageByProviderID(b.ctx, b.org.ID, id)
				return err
			})
			return m, err
		}
		for _, tag := range []string{"m1", "m5", "m10"} {
			got, err := byProvider("SM-" + tag)
			if err != nil {
				t.Fatal(err)
			}
			wantEqual(t, fleet.byTag[tag], got)
		}
		for _, id := range []string{"SM-m", "sm-m1", ""} {
			_, err := byProvider(id)
			wantIs(t, err, store.ErrNotFound)
		}
		// Once the carrier's id is set, a status callback finds the message.
		m := newMessage(t, b, b.org.ID)
		_, err := byProvider("SM-new")
		wantIs(t, err, store.ErrNotFound)
		m.ProviderMessageID, m.Status, m.UpdatedAt = ptr("SM-new"), model.MessageSent, at(30)
		b.update(t, func(tx store.Tx) error { return tx.UpdateMessage(b.ctx, &m) })
		got, err := byProvider("SM-new")
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, m, got)
	}},
	{"InboundOnce", func(t *testing.T, b *bundle) {
		// An inbound message's carrier id is recorded once per
		// organization; outbound ones (the carrier's answers) are not
		// constrained.
		inbound := func(m *model.Message) {
			m.Direction, m.Status, m.ProviderMessageID = model.Inbound, model.MessageReceived, ptr("SM-in")
		}
		first := newMessage(t, b, b.org.ID, inbound)
		dup := model.Message{OrgID: b.org.ID, ConversationID: "conv", Channel: model.ChannelSMS, FromNumber: "+15550000001",
			ToNumber: "+15551110001", Body: "again", CreatedAt: at(1), UpdatedAt: at(1)}
		inbound(&dup)
		wantIs(t, b.st.Update(b.ctx, func(tx store.Tx) error { return tx.CreateMessage(b.ctx, &dup) }), store.ErrConflict)
		newMessage(t, b, b.other.ID, inbound)
		for range 2 {
			newMessage(t, b, b.org.ID, func(m *model.Message) { m.ProviderMessageID = ptr("SM-in") })
		}
		got, err := store.Read(b.ctx, b.st, func(tx store.Tx) (model.Message, error) {
			return tx.MessageByProviderID(b.ctx, b.org.ID, "SM-in")
		})
		if err != nil || got.Direction != model.Outbound {
			t.Fatalf("newest with the id: %v %v", got.Direction, err)
		}
		wantEqual(t, first, getMessage(t, b, b.org.ID, first.ID))
	}},
	{"DueReplies", func(t *testing.T, b *bundle) {
		due := func(d *time.Time) func(*model.Message) {
			return func(m *model.Message) { m.Direction, m.Status, m.ReplyDueAt = model.Inbound, model.MessageReceived, d }
		}
		t10, t5, t7 := at(10), at(5), at(7)
		m1 := newMessage(t, b, b.org.ID, due(&t10))
		m2 := newMessage(t, b, b.org.ID, due(&t5))
		newMessage(t, b, b.org.ID, due(nil))
		m4 := newMessage(t, b, b.other.ID, due(&t7))
		dueAt := func(now time.Time, limit int) []string {
			return messageIDs(read(t, b, func(tx store.Tx) ([]model.Message, error) { return tx.DueReplies(b.ctx, now, limit) }))
		}
		wantEqual(t, []string{m2.ID, m4.ID}, dueAt(at(8), 10))
		wantEqual(t, []string{m2.ID}, dueAt(at(20), 1))
		wantEqual(t, []string{}, dueAt(at(4), 10))
		wantEqual(t, m2, getMessage(t, b, b.org.ID, m2.ID)) // ReplyDueAt round-trips
		claim := func(org, id string, now, until time.Time) bool {
			var ok bool
			b.update(t, func(tx store.Tx) (err error) {
				ok, err = tx.ClaimReply(b.ctx, org, id, now, until)
				return err
			})
			return ok
		}
		if !claim(b.org.ID, m2.ID, at(8), at(100)) {
			t.Fatal("an overdue reply was not claimed")
		}
		if claim(b.org.ID, m2.ID, at(8), at(100)) || claim(b.org.ID, m1.ID, at(8), at(100)) || claim(b.other.ID, m1.ID, at(20), at(100)) ||
			claim("acme", m1.ID, at(20), at(100)) {
			t.Fatal("claimed a reply that was claimed already, not yet due, or another organization's")
		}
		wantEqual(t, []string{m4.ID, m1.ID}, dueAt(at(20), 10))
		wantEqual(t, at(100), *getMessage(t, b, b.org.ID, m2.ID).ReplyDueAt)
		// Answered: nothing is owed any more.
		m1.ReplyDueAt = nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateMessage(b.ctx, &m1) })
		wantEqual(t, []string{m4.ID}, dueAt(at(20), 10))
		wantEqual(t, []string{m4.ID, m2.ID}, dueAt(at(200), 10))
	}},
	{"OptOuts", func(t *testing.T, b *bundle) {
		mc := newMessagingConnection(t, b, b.org.ID)
		other := newMessagingConnection(t, b, b.org.ID)
		keyword := func(org, conn, number string) (string, error) {
			return store.Read(b.ctx, b.st, func(tx store.Tx) (string, error) { return tx.OptOutKeyword(b.ctx, org, conn, number) })
		}
		const number = "+15551110001"
		_, err := keyword(b.org.ID, mc.ID, number)
		wantIs(t, err, store.ErrNotFound)
		b.update(t, func(tx store.Tx) error { return tx.SetOptOut(b.ctx, b.org.ID, mc.ID, number, "STOP", at(1)) })
		b.update(t, func(tx store.Tx) error { return tx.SetOptOut(b.ctx, b.org.ID, mc.ID, number, "UNSUBSCRIBE", at(2)) })
		if k, err := keyword(b.org.ID, mc.ID, number); err != nil || k != "UNSUBSCRIBE" {
			t.Fatalf("keyword %q, %v", k, err)
		}
		// Per connection, per number, per organization.
		for _, q := range [][3]string{{b.org.ID, other.ID, number}, {b.org.ID, mc.ID, "+15551110002"}, {b.other.ID, mc.ID, number}, {"acme", mc.ID, number}} {
			_, err := keyword(q[0], q[1], q[2])
			wantIs(t, err, store.ErrNotFound)
		}
		wantIs(t, b.st.Update(b.ctx, func(tx store.Tx) error { return tx.SetOptOut(b.ctx, b.other.ID, mc.ID, number, "STOP", at(3)) }), store.ErrNotFound)
		b.update(t, func(tx store.Tx) error { return tx.ClearOptOut(b.ctx, b.other.ID, mc.ID, number) })
		if _, err := keyword(b.org.ID, mc.ID, number); err != nil {
			t.Fatal("another organization's opt-in cleared it")
		}
		b.update(t, func(tx store.Tx) error { return tx.ClearOptOut(b.ctx, b.org.ID, mc.ID, number) })
		b.update(t, func(tx store.Tx) error { return tx.ClearOptOut(b.ctx, b.org.ID, mc.ID, number) }) // none: no error
		_, err = keyword(b.org.ID, mc.ID, number)
		wantIs(t, err, store.ErrNotFound)
		// Deleting the connection deletes its opt-outs.
		b.update(t, func(tx store.Tx) error { return tx.SetOptOut(b.ctx, b.org.ID, other.ID, number, "STOP", at(4)) })
		b.update(t, func(tx store.Tx) error { return tx.DeleteMessagingConnection(b.ctx, b.org.ID, other.ID) })
		_, err = keyword(b.org.ID, other.ID, number)
		wantIs(t, err, store.ErrNotFound)
	}},
	{"DeleteAgentKeepsMessages", func(t *testing.T, b *bundle) {
		// Its messages keep agentId and agentName, as its calls do.
		folder := newFolder(t, b, b.org.ID)
		a := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name, a.FolderID = "Doomed", &folder.ID })
		mc := newMessagingConnection(t, b, b.org.ID)
		m := newMessage(t, b, b.org.ID, func(m *model.Message) {
			m.AgentID, m.AgentName, m.MessagingConnectionID = &a.ID, &a.Name, &mc.ID
		})
		c := newCall(t, b, b.org.ID, a.ID)
		b.update(t, func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, a.ID) })
		b.update(t, func(tx store.Tx) error { return tx.DeleteMessagingConnection(b.ctx, b.org.ID, mc.ID) })
		wantEqual(t, m, getMessage(t, b, b.org.ID, m.ID))
		wantEqual(t, c, getCall(t, b, b.org.ID, c.ID))
		got, _ := listMessages(t, b, store.MessageFilter{AgentID: a.ID})
		wantEqual(t, []string{m.ID}, got)
		got, _ = listMessages(t, b, store.MessageFilter{FolderID: folder.ID})
		wantEqual(t, []string{}, got, cmpopts.EquateEmpty())
	}},
}
