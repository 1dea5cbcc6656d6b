package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Service applies the agent rules and persists agents.
type Service struct {
	Store store.Store
}

// View is an agent with the resources its answer embeds.
type View struct {
	model.Agent
	Folder         *model.Folder
	SIPTrunk       *model.SIPTrunk
	PhoneNumbers   []model.PhoneNumber
	CustomTools    []model.CustomTool
	KnowledgeBases []model.KnowledgeBaseRef
}

// Create checks in and stores a new agent.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (View, error) {
	var l invalid.List
	check(&in, true, &l)
	mode := model.ModeSinglePrompt
	if in.Mode.Present() {
		mode = in.Mode.V
	}
	var newTools []string
	if in.CustomTools.Present() {
		newTools = checkNewTools(in.CustomTools.V, &l)
	}
	checkFlow(&in, mode, newTools, &l)
	now := model.Now()
	a := model.Agent{
		ID: model.NewID(), OrgID: orgID, Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		Config:    model.AgentConfig{InterruptionThresholdMs: model.DefaultInterruptionThresholdMs},
		CreatedAt: now, UpdatedAt: now,
	}
	apply(&a, &in)
	var v View
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		if err := checkReferences(ctx, tx, orgID, &in, &l); err != nil {
			return err
		}
		if err := l.Err(); err != nil {
			return err
		}
		if err := tx.CreateAgent(ctx, &a); err != nil {
			return err
		}
		if err := createTools(ctx, tx, a, in.CustomTools.V); err != nil {
			return err
		}
		if in.KnowledgeBaseIDs.Present() {
			if err := tx.SetAgentKnowledgeBases(ctx, orgID, a.ID, dedupe(in.KnowledgeBaseIDs.V)); err != nil {
				return err
			}
		}
		var err error
		v, err = loadView(ctx, tx, a)
		return err
	})
	return v, err
}

// Get returns one agent.
func (s *Service) Get(ctx context.Context, orgID, id string) (View, error) {
	var v View
	err := s.Store.View(ctx, func(tx store.Tx) error {
		a, err := tx.GetAgent(ctx, orgID, id)
		if err != nil {
			return err
		}
		v, err = loadView(ctx, tx, a)
		return err
	})
	return v, err
}

// List returns one page of agents and the number matching the filter.
func (s *Service) List(ctx context.Context, orgID string, f store.AgentFilter) ([]View, int, error) {
	var (
		views []View
		total int
	)
	err := s.Store.View(ctx, func(tx store.Tx) error {
		agents, n, err := tx.ListAgents(ctx, orgID, f)
		if err != nil {
			return err
		}
		total = n
		views, err = loadViews(ctx, tx, orgID, agents)
		return err
	})
	return views, total, err
}

// BatchGet returns the agents among ids that exist in the organization, in
// the order asked, each once.
func (s *Service) BatchGet(ctx context.Context, orgID string, ids []string) ([]View, error) {
	ids = dedupe(ids)
	var views []View
	err := s.Store.View(ctx, func(tx store.Tx) error {
		agents, err := tx.GetAgents(ctx, orgID, ids)
		if err != nil {
			return err
		}
		order := make(map[string]int, len(ids))
		for i, id := range ids {
			order[id] = i
		}
		slices.SortFunc(agents, func(a, b model.Agent) int { return order[a.ID] - order[b.ID] })
		views, err = loadViews(ctx, tx, orgID, agents)
		return err
	})
	return views, err
}

// Update applies a partial update.
func (s *Service) Update(ctx context.Context, orgID, id string, in Input) (View, error) {
	var l invalid.List
	check(&in, false, &l)
	var v View
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		a, err := tx.GetAgent(ctx, orgID, id)
		if err != nil {
			return err
		}
		if err := checkReferences(ctx, tx, orgID, &in, &l); err != nil {
			return err
		}
		if in.FlowDefinition.Present() {
			tools, err := tx.ListCustomTools(ctx, orgID, []string{a.ID})
			if err != nil {
				return err
			}
			checkFlow(&in, a.Mode, toolNames(tools[a.ID]), &l)
		}
		if err := l.Err(); err != nil {
			return err
		}
		apply(&a, &in)
		a.UpdatedAt = model.Now()
		if err := tx.UpdateAgent(ctx, &a); err != nil {
			return err
		}
		if in.KnowledgeBaseIDs.Set {
			if err := tx.SetAgentKnowledgeBases(ctx, orgID, a.ID, dedupe(in.KnowledgeBaseIDs.V)); err != nil {
				return err
			}
		}
		v, err = loadView(ctx, tx, a)
		return err
	})
	return v, err
}

// Delete removes an agent. Its phone numbers become unassigned; its custom
// tools and knowledge-base assignments go with it; calls and messages keep
// its id and name.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		return tx.DeleteAgent(ctx, orgID, id)
	})
}

// CopySuffix is appended to a duplicate's name.
const CopySuffix = " (Copy)"

// CopyName is the name of a duplicate: the original name with " (Copy)"
// appended, the original cut (by characters) so the result stays within
// MaxNameLen.
func CopyName(name string) string {
	r := []rune(name)
	if keep := MaxNameLen - len([]rune(CopySuffix)); len(r) > keep {
		r = r[:keep]
	}
	return string(r) + CopySuffix
}

// Duplicate copies an agent's configuration, custom tools and knowledge-base
// assignments under a new id; phone numbers stay with the original.
func (s *Service) Duplicate(ctx context.Context, orgID, id string) (View, error) {
	var v View
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		orig, err := tx.GetAgent(ctx, orgID, id)
		if err != nil {
			return err
		}
		now := model.Now()
		dup := orig
		dup.ID, dup.Name, dup.Config = model.NewID(), CopyName(orig.Name), orig.Config.Clone()
		dup.CreatedAt, dup.UpdatedAt = now, now
		if err := tx.CreateAgent(ctx, &dup); err != nil {
			return err
		}
		tools, err := tx.ListCustomTools(ctx, orgID, []string{orig.ID})
		if err != nil {
			return err
		}
		for _, t := range tools[orig.ID] {
			t.ID, t.AgentID, t.CreatedAt, t.UpdatedAt = model.NewID(), dup.ID, now, now
			if err := tx.CreateCustomTool(ctx, &t); err != nil {
				return err
			}
		}
		kbs, err := tx.AgentKnowledgeBases(ctx, orgID, []string{orig.ID})
		if err != nil {
			return err
		}
		ids := make([]string, len(kbs[orig.ID]))
		for i, kb := range kbs[orig.ID] {
			ids[i] = kb.ID
		}
		if err := tx.SetAgentKnowledgeBases(ctx, orgID, dup.ID, ids); err != nil {
			return err
		}
		v, err = loadView(ctx, tx, dup)
		return err
	})
	return v, err
}

// checkReferences records in l the ids of the request that name nothing in
// the organization, naming the field, as the interface requires. Ids already
// refused for their shape are not looked up. It returns only database errors.
func checkReferences(ctx context.Context, tx store.Tx, orgID string, in *Input, l *invalid.List) error {
	exists := func(field string, err error) error {
		if errors.Is(err, store.ErrNotFound) {
			l.Add(field, "names no %s in this organization", field[:len(field)-2])
			return nil
		}
		return err
	}
	if in.FolderID.Present() && !l.Has("folderId") {
		_, err := tx.GetFolder(ctx, orgID, in.FolderID.V)
		if err := exists("folderId", err); err != nil {
			return err
		}
	}
	if in.SIPTrunkID.Present() && !l.Has("sipTrunkId") {
		_, err := tx.GetSIPTrunk(ctx, orgID, in.SIPTrunkID.V)
		if err := exists("sipTrunkId", err); err != nil {
			return err
		}
	}
	if in.MessagingConnectionID.Present() && !l.Has("messagingConnectionId") {
		_, err := tx.GetMessagingConnection(ctx, orgID, in.MessagingConnectionID.V)
		if err := exists("messagingConnectionId", err); err != nil {
			return err
		}
	}
	if in.KnowledgeBaseIDs.Present() && len(in.KnowledgeBaseIDs.V) > 0 {
		ids := dedupe(in.KnowledgeBaseIDs.V)
		found, err := tx.GetKnowledgeBases(ctx, orgID, ids)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, kb := range found {
			have[kb.ID] = true
		}
		for i, id := range in.KnowledgeBaseIDs.V {
			if f := invalid.Index("knowledgeBaseIds", i); !have[id] && !l.Has(f) {
				l.Add(f, "names no knowledge base in this organization")
			}
		}
	}
	return nil
}

func loadView(ctx context.Context, tx store.Tx, a model.Agent) (View, error) {
	views, err := loadViews(ctx, tx, a.OrgID, []model.Agent{a})
	if err != nil {
		return View{}, err
	}
	return views[0], nil
}

// loadViews fetches what the agents refer to with one query per kind.
func loadViews(ctx context.Context, tx store.Tx, orgID string, agents []model.Agent) ([]View, error) {
	ids := make([]string, len(agents))
	var folderIDs, trunkIDs []string
	for i, a := range agents {
		ids[i] = a.ID
		if a.FolderID != nil {
			folderIDs = append(folderIDs, *a.FolderID)
		}
		if a.SIPTrunkID != nil {
			trunkIDs = append(trunkIDs, *a.SIPTrunkID)
		}
	}
	folders, err := tx.GetFolders(ctx, orgID, dedupe(folderIDs))
	if err != nil {
		return nil, fmt.Errorf("load folders: %w", err)
	}
	trunks, err := tx.GetSIPTrunks(ctx, orgID, dedupe(trunkIDs))
	if err != nil {
		return nil, fmt.Errorf("load trunks: %w", err)
	}
	numbers, err := tx.AgentPhoneNumbers(ctx, orgID, ids)
	if err != nil {
		return nil, fmt.Errorf("load phone numbers: %w", err)
	}
	tools, err := tx.ListCustomTools(ctx, orgID, ids)
	if err != nil {
		return nil, fmt.Errorf("load custom tools: %w", err)
	}
	kbs, err := tx.AgentKnowledgeBases(ctx, orgID, ids)
	if err != nil {
		return nil, fmt.Errorf("load knowledge bases: %w", err)
	}
	byFolder := map[string]*model.Folder{}
	for i := range folders {
		byFolder[folders[i].ID] = &folders[i]
	}
	byTrunk := map[string]*model.SIPTrunk{}
	for i := range trunks {
		byTrunk[trunks[i].ID] = &trunks[i]
	}
	views := make([]View, len(agents))
	for i, a := range agents {
		v := View{Agent: a, PhoneNumbers: numbers[a.ID], CustomTools: tools[a.ID], KnowledgeBases: kbs[a.ID]}
		if a.FolderID != nil {
			v.Folder = byFolder[*a.FolderID]
		}
		if a.SIPTrunkID != nil {
			v.SIPTrunk = byTrunk[*a.SIPTrunkID]
		}
		views[i] = v
	}
	return views, nil
}

// dedupe returns ids without repeats, in first-seen order.
func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
