package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// BenchChunks is how many chunks BenchSearchKnowledgeChunks seeds:
// PARLEY_BENCH_CHUNKS, default 100,000.
func BenchChunks(b *testing.B) int {
	b.Helper()
	v := os.Getenv("PARLEY_BENCH_CHUNKS")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("PARLEY_BENCH_CHUNKS=%q: want a positive number", v)
	}
	return n
}

// Shape of the seeded knowledge base.
const (
	benchChunksPerSource = 100
	// benchSearchLimit is how many candidates retrieval asks the store for.
	benchSearchLimit = 50
	benchQueries     = 256
)

// BenchSearchKnowledgeChunks seeds one knowledge base of st with BenchChunks
// chunks of generated English-like text (sources of 100 chunks, all in one
// transaction, through ReplaceKnowledgeChunks), plus another organization's
// base with a few, runs settle (nil: nothing) to leave the database as it
// would be by the time such a base is queried (a checkpoint, an analyze),
// then measures searches of 3 to 6 words for the 50 best chunks, each in
// its own read transaction. Besides ns/op it reports each search's p50 and
// p99 latency in milliseconds and how many hits it returned on average.
func BenchSearchKnowledgeChunks(b *testing.B, st store.Store, settle func(ctx context.Context) error) {
	ctx := b.Context()
	n := BenchChunks(b)
	rng := rand.New(rand.NewPCG(3, 4))
	gen := newTextGen(rng)

	org := model.Organization{Name: "bench", ConcurrencyLimit: 100}
	other := model.Organization{Name: "other", ConcurrencyLimit: 100}
	var kb, otherKB model.KnowledgeBase
	start := time.Now()
	err := st.Update(ctx, func(tx store.Tx) error {
		for _, o := range []*model.Organization{&org, &other} {
			if err := tx.CreateOrg(ctx, o); err != nil {
				return err
			}
		}
		kb = model.KnowledgeBase{OrgID: org.ID, Name: "Help center"}
		otherKB = model.KnowledgeBase{OrgID: other.ID, Name: "Help center"}
		for _, k := range []*model.KnowledgeBase{&kb, &otherKB} {
			if err := tx.CreateKnowledgeBase(ctx, k); err != nil {
				return err
			}
		}
		seed := func(orgID, kbID string, chunks int) error {
			for done, i := 0, 0; done < chunks; i++ {
				src := model.KnowledgeSource{OrgID: orgID, KnowledgeBaseID: kbID, DisplayName: fmt.Sprintf("article-%d.md", i)}
				if err := tx.CreateKnowledgeSource(ctx, &src); err != nil {
					return err
				}
				batch := make([]model.KnowledgeChunk, min(benchChunksPerSource, chunks-done))
				for j := range batch {
					batch[j] = model.KnowledgeChunk{Seq: j, Text: gen.chunk()}
				}
				if err := tx.ReplaceKnowledgeChunks(ctx, orgID, kbID, src.ID, batch); err != nil {
					return err
				}
				done += len(batch)
			}
			return nil
		}
		if err := seed(org.ID, kb.ID, n); err != nil {
			return err
		}
		return seed(other.ID, otherKB.ID, min(n, 1000))
	})
	if err != nil {
		b.Fatalf("seed chunks: %v", err)
	}
	if settle != nil {
		if err := settle(ctx); err != nil {
			b.Fatalf("settle: %v", err)
		}
	}
	b.Logf("%s: seeded %d chunks in %v", st.Engine(), n, time.Since(start).Round(time.Millisecond))

	queries := make([]string, benchQueries)
	for i := range queries {
		queries[i] = gen.query()
	}
	kbIDs := []string{kb.ID}
	// How much of the base a query ranks is what a search costs (the store
	// bounds it): report it for a sample of the queries, as the share of
	// the base that a search asking for every chunk returns.
	matched := make([]float64, 16)
	for i := range matched {
		if err := st.View(ctx, func(tx store.Tx) error {
			found, err := tx.SearchKnowledgeChunks(ctx, org.ID, kbIDs, queries[i], n)
			matched[i] = float64(len(found)) / float64(n)
			return err
		}); err != nil {
			b.Fatalf("search %q: %v", queries[i], err)
		}
	}
	slices.Sort(matched)
	b.Logf("%s: a query ranks %.1f%% of the chunks (median of %d; from %.1f%% to %.1f%%), e.g. %q",
		st.Engine(), 100*matched[len(matched)/2], len(matched), 100*matched[0], 100*matched[len(matched)-1], queries[0])
	lat := make([]time.Duration, 0, 1024)
	hits, i := 0, 0
	for b.Loop() {
		q := queries[i%len(queries)]
		i++
		t0 := time.Now()
		err := st.View(ctx, func(tx store.Tx) error {
			found, err := tx.SearchKnowledgeChunks(ctx, org.ID, kbIDs, q, benchSearchLimit)
			hits += len(found)
			return err
		})
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatalf("search %q: %v", q, err)
		}
	}
	if hits == 0 {
		b.Fatal("no search found anything")
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(hits)/float64(len(lat)), "hits/op")
}

// textGen writes help-center prose: sentences of function words and
// content words. The content words are Zipf-distributed (s=1, offset 20)
// over a vocabulary of benchVocabulary words, the real words of benchWords
// first and made-up English-like ones after them, so that, as in a real
// knowledge base, the commonest word is in about a fifth of the chunks and
// most words in well under one percent.
type textGen struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
	b     strings.Builder
}

// benchVocabulary is how many distinct content words the text uses.
const benchVocabulary = 8000

func newTextGen(rng *rand.Rand) *textGen {
	return &textGen{
		rng:   rng,
		zipf:  rand.NewZipf(rng, 1.0001, 20, benchVocabulary-1),
		vocab: benchVocab(benchVocabulary),
	}
}

// word is a content word, drawn as the text draws them.
func (g *textGen) word() string { return g.vocab[g.zipf.Uint64()] }

// query is 3 to 6 distinct content words, drawn as the text draws them:
// people ask about what the articles talk about.
func (g *textGen) query() string {
	words := make([]string, 0, 6)
	for n := 3 + g.rng.IntN(4); len(words) < n; {
		if w := g.word(); !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

// chunk is 3 to 6 sentences of 6 to 15 words, about 50 words in all (some
// 300 bytes), like the chunks Parley's indexer cuts.
func (g *textGen) chunk() string {
	g.b.Reset()
	for s := range 3 + g.rng.IntN(4) {
		if s > 0 {
			g.b.WriteByte(' ')
		}
		words := 6 + g.rng.IntN(10)
		for w := range words {
			var word string
			if g.rng.IntN(10) < 4 {
				word = benchFunctionWords[g.rng.IntN(len(benchFunctionWords))]
			} else {
				word = g.word()
			}
			switch {
			case w == 0:
				g.b.WriteString(strings.ToUpper(word[:1]))
				g.b.WriteString(word[1:])
			default:
				g.b.WriteByte(' ')
				g.b.WriteString(word)
			}
		}
		switch g.rng.IntN(10) {
		case 0:
			g.b.WriteByte('?')
		case 1:
			g.b.WriteByte('!')
		default:
			g.b.WriteByte('.')
		}
	}
	return g.b.String()
}

// benchVocab is n distinct content words: benchWords, then words made of
// two or three syllables, the same every run.
func benchVocab(n int) []string {
	rng := rand.New(rand.NewPCG(5, 6))
	onsets := strings.Fields("b bl br c ch cl cr d dr f fl fr g gl gr h j k l m n p pl pr qu r s sc sh sl sm sn sp st str t th tr v w wh z")
	vowels := strings.Fields("a e i o u ai ea ee oa oo ou y")
	codas := []string{"", "", "", "b", "ck", "d", "ft", "g", "k", "l", "ll", "m", "n", "nd", "ng", "nt", "p", "r", "rd", "rn", "s", "ss", "st", "t", "x"}
	seen := map[string]bool{}
	vocab := make([]string, 0, n)
	for _, w := range benchWords {
		seen[w] = true
		vocab = append(vocab, w)
	}
	for _, w := range benchFunctionWords {
		seen[w] = true
	}
	for len(vocab) < n {
		var b strings.Builder
		for range 2 + rng.IntN(2) {
			b.WriteString(onsets[rng.IntN(len(onsets))])
			b.WriteString(vowels[rng.IntN(len(vowels))])
			b.WriteString(codas[rng.IntN(len(codas))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return vocab[:n]
}

var benchFunctionWords = strings.Fields(`the a an of to and in for on with is are be can your our we you it this
	that by at from as or if when will not was has have do does all any each more most some`)

// benchWords is the real words of the content vocabulary, most frequent
// first.
var benchWords = distinct(strings.Fields(`
	order account customer payment refund delivery product service support team
	shipping price plan card return email phone number address time day week month
	year store item package invoice subscription password login app website page
	policy warranty discount code gift balance charge fee tax receipt purchase cart
	checkout stock size colour color model version update setting option feature
	request ticket agent chat call message notification reminder schedule appointment
	booking reservation cancellation change exchange replacement repair damage
	problem issue error question answer help guide instructions steps information
	details status tracking carrier courier parcel box label pickup dropoff locker
	country region city postcode international domestic express standard overnight
	free premium basic business personal family student member membership loyalty
	points reward voucher coupon promotion sale offer deal bundle trial renewal
	billing statement bank transfer credit debit wallet paypal currency exchange rate
	limit minimum maximum amount total cost estimate quote contract agreement terms
	conditions privacy security data profile username verification identity document
	photo upload download file format attachment link button screen menu dashboard
	report history activity log device computer laptop tablet mobile browser network
	wifi bluetooth battery charger cable adapter screen keyboard mouse speaker headphones
	camera printer scanner router modem installation setup configuration reset restart
	backup restore sync storage cloud space memory performance speed quality warranty
	manufacturer brand supplier warehouse inventory shipment batch pallet container
	truck driver route map location branch office hours holiday weekend morning evening
	night today tomorrow yesterday deadline delay wait queue priority urgent normal
	manager supervisor representative specialist technician engineer consultant advisor
	training course lesson tutorial video article faq community forum feedback review
	rating survey complaint compliment suggestion improvement feature roadmap release
	launch beta preview early access invite referral partner affiliate reseller
	wholesale retail online offline mobile desktop web api integration plugin extension
	developer token key secret permission role admin owner user guest group workspace
	project folder label tag filter search sort export import migrate archive delete
	remove add create edit save submit confirm approve reject pending active inactive
	expired suspended closed open resolved escalated assigned unassigned transferred
	recorded transcribed voicemail callback hold transfer dial extension ring answer
	hangup busy missed inbound outbound caller recipient sender contact lead prospect
	campaign newsletter unsubscribe consent opt preference language translation accent
	accessibility disability wheelchair elevator parking entrance exit floor building
	room desk meeting conference webinar event ticketing venue seat row section gate
	flight airline airport baggage luggage boarding passport visa hotel checkin checkout
	breakfast dinner restaurant menu allergy vegetarian vegan gluten dairy nut spicy
	medicine pharmacy prescription doctor nurse clinic hospital insurance claim coverage
	deductible premium policyholder beneficiary accident injury theft fire flood storm
	weather temperature heating cooling boiler radiator thermostat plumbing leak pipe
	water electricity gas meter reading tariff supplier outage engineer visit
`))

func distinct(words []string) []string {
	seen := map[string]bool{}
	return slices.DeleteFunc(words, func(w string) bool {
		if seen[w] {
			return true
		}
		seen[w] = true
		return false
	})
}
