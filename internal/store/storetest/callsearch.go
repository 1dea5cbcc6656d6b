package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Texts a call's searchable columns hold in the search fixture: LIKE's
// wildcards and escape, FTS5's quote and operators, spaces, letters that
// fold in one engine's lower() and not the other's (SQLite's lower() folds
// ASCII only), and texts shorter than a trigram.
var (
	searchNumbers = []string{"+15550001001", "+15550002002", "+442071234567", "+15550001003"}
	searchAgents  = []string{"Alice Agent", "Bob_Bot", "Carol 50%", `Dan\Dan`, `Éva "Q" NEAR`, "ÉCOLE", "Straße ẞ",
		"KELVIN \u212a", "İstanbul", "phone 📞 line", "a", "AND OR NOT*"}
	searchSummaries = []string{"", "Customer asked for a refund.", "100% satisfied", "under_score", `back\slash`,
		"Mixed CASE Summary", `say "hi" -x`, "école fermée", "ß", "  two  spaces  ", "REFUND REFUND", "refund:now ^a"}
)

// searchQueries is what the search test asks: fixed cases, and substrings of
// 1 to 5 characters of every text, as written and upper-cased.
func searchQueries() []string {
	qs := []string{"%", "_", `\`, `"`, `""`, "0%", "b_b", "e_a", `k\s`, "%%%", "___", `\\`, "école", "ÉCOLE", "É",
		"kelvin k", "kelvin \u212a", "İst", "ist", "i\u0307st", "📞", "+1555", "zzz", `"hi"`, `say "`, "' OR 1", "near",
		"NEAR", "and or", "not*", "a*", "sum*", "^a", "refund:", ":now", "-x", "  ", "   ", "two  spaces", "ẞ", "straße",
		"STRASSE", "refund refund", "ref", "re", "r", "+", "1", "00", "555", "4420"}
	texts := slices.Concat(searchNumbers, searchAgents, searchSummaries)
	for _, s := range texts {
		r := []rune(s)
		for n := 1; n <= 5; n++ {
			for i := 0; i+n <= len(r); i += 3 {
				sub := string(r[i : i+n])
				qs = append(qs, sub, strings.ToUpper(sub))
			}
		}
	}
	slices.Sort(qs)
	return slices.Compact(qs)
}

// likeFold is lower() as the engine writes it: SQLite's folds ASCII letters
// only, PostgreSQL's every letter.
func likeFold(engine string) func(string) string {
	if engine == "sqlite" {
		return func(s string) string {
			return strings.Map(func(r rune) rune {
				if 'A' <= r && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, s)
		}
	}
	return func(s string) string { return strings.Map(unicode.ToLower, s) }
}

// matchesQuery is q's meaning, brute force: a substring, folded, of one of
// the four columns.
func matchesQuery(fold func(string) string, c model.Call, q string) bool {
	cols := []string{c.FromNumber, c.ToNumber, c.AgentName}
	if c.Summary != nil {
		cols = append(cols, *c.Summary)
	}
	for _, col := range cols {
		if strings.Contains(fold(col), fold(q)) {
			return true
		}
	}
	return false
}

var callSearchTests = []test{
	{"MatchesBruteForce", func(t *testing.T, b *bundle) {
		// Every query finds, and counts, exactly the calls a filter over
		// the fixture finds, in a whole list, page by page (small pages
		// and large totals take the list's order; large pages and small
		// totals, the index's matches), and beside another filter.
		agent := newAgent(t, b, b.org.ID)
		var calls []model.Call
		for i := range 48 {
			c := newCall(t, b, b.org.ID, agent.ID, func(c *model.Call) {
				c.FromNumber = searchNumbers[i%len(searchNumbers)]
				c.ToNumber = searchNumbers[(i/len(searchNumbers)+1)%len(searchNumbers)]
				c.AgentName = searchAgents[i%len(searchAgents)]
				if s := searchSummaries[(i*7)%len(searchSummaries)]; s != "" {
					c.Summary = ptr(s)
				}
				c.Status = []string{model.CallCompleted, model.CallFailed}[i%5/4]
				c.CreatedAt = at(i % 20) // ties, broken by id
			})
			calls = append(calls, c)
		}
		for i := range 6 { // never listed: another organization's, matching everything
			newCall(t, b, b.other.ID, agent.ID, func(c *model.Call) {
				c.AgentName, c.Summary = searchAgents[i], ptr(strings.Join(slices.Concat(searchSummaries, searchAgents), " "))
			})
		}
		fold := likeFold(b.st.Engine())
		fleet := callFleet{calls: calls}
		for i, q := range searchQueries() {
			keep := func(c model.Call) bool { return matchesQuery(fold, c, q) }
			want := fleet.sorted(keep, callKeys[""], store.Desc)
			got, total := listCalls(t, b, store.CallFilter{Query: q})
			wantEqual(t, want, got, cmpopts.EquateEmpty())
			if total != len(want) {
				t.Fatalf("q %q: total %d, want %d", q, total, len(want))
			}
			if i%4 != 0 {
				// Every query's matches are checked; pages and another
				// filter beside it on every fourth (hundreds of queries
				// still), which keeps the suite's time in bounds.
				continue
			}
			for _, p := range []store.Page{{Number: 1, Size: 2}, {Number: 3, Size: 2}, {Number: 2, Size: 20, SortDir: store.Asc}} {
				got, total := listCalls(t, b, store.CallFilter{Query: q, Page: p})
				all := want
				if p.SortDir == store.Asc {
					all = reversed(want)
				}
				page := all[min(p.Offset(), len(all)):min(p.Offset()+p.Size, len(all))]
				if total != len(want) {
					t.Fatalf("q %q, page %+v: total %d, want %d", q, p, total, len(want))
				}
				wantEqual(t, page, got, cmpopts.EquateEmpty())
			}
			failed := fleet.sorted(func(c model.Call) bool { return keep(c) && c.Status == model.CallFailed }, callKeys[""], store.Desc)
			got, total = listCalls(t, b, store.CallFilter{Query: q, Statuses: []string{model.CallFailed}, Page: store.Page{Number: 1, Size: 100}})
			if total != len(failed) {
				t.Fatalf("q %q, failed calls: total %d, want %d", q, total, len(failed))
			}
			wantEqual(t, failed, got, cmpopts.EquateEmpty())
		}
	}},
	{"FollowsUpdates", func(t *testing.T, b *bundle) {
		// A call is found by what it holds now: its summary once the call
		// ends, its agent's name as last written.
		agent := newAgent(t, b, b.org.ID)
		c := newCall(t, b, b.org.ID, agent.ID, func(c *model.Call) { c.AgentName, c.Status = "Zed Agent", model.CallInProgress })
		other := newCall(t, b, b.org.ID, agent.ID, func(c *model.Call) { c.AgentName = "Yan Agent" })
		found := func(q string) []string {
			t.Helper()
			ids, total := listCalls(t, b, store.CallFilter{Query: q})
			wantEqual(t, len(ids), total)
			return ids
		}
		wantEqual(t, []string(nil), found("refund"), cmpopts.EquateEmpty())
		wantEqual(t, []string{c.ID}, found("zed"))
		c.Status, c.Summary = model.CallCompleted, ptr("Customer wants a REFUND.")
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &c) })
		wantEqual(t, []string{c.ID}, found("refund"))
		wantEqual(t, []string{c.ID}, found("wants a"))
		c.AgentName = "Xavier"
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &c) })
		wantEqual(t, []string(nil), found("zed"), cmpopts.EquateEmpty())
		wantEqual(t, []string{c.ID}, found("xavier"))
		wantEqual(t, []string{other.ID}, found("agent"))
		// An update of other columns leaves what is found alone.
		b.update(t, func(tx store.Tx) error { return tx.SetPostCallWebhookStatus(b.ctx, b.org.ID, c.ID, model.WebhookSent) })
		c.FromNumber = "+15557654321"
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &c) })
		wantEqual(t, []string{c.ID}, found("7654"))
		wantEqual(t, []string{c.ID}, found("refund"))
		c.Summary = nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &c) })
		wantEqual(t, []string(nil), found("refund"), cmpopts.EquateEmpty())
		// A call created and rolled back leaves nothing to find.
		err := b.st.Update(b.ctx, func(tx store.Tx) error {
			c := model.Call{OrgID: b.org.ID, AgentID: agent.ID, AgentName: "Ghost", Direction: model.Inbound, Status: model.CallRinging}
			if err := tx.CreateCall(b.ctx, &c); err != nil {
				return err
			}
			return fmt.Errorf("roll back")
		})
		if err == nil {
			t.Fatal("the transaction committed")
		}
		wantEqual(t, []string(nil), found("ghost"), cmpopts.EquateEmpty())
	}},
}
