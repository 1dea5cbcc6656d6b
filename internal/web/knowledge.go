package web

import (
	"net/http"
	"strconv"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// knowledgeListData is the list of knowledge bases with the create form.
type knowledgeListData struct {
	formState
	Bases []model.KnowledgeBase
	Pager pager
}

var knowledgeFields = []agentField{
	{Name: "name", Label: "Name", Kind: kindText, Required: true, MaxLen: knowledge.MaxNameLen, Help: "At most " + strconv.Itoa(knowledge.MaxNameLen) + " characters."},
	{Name: "description", Label: "Description (optional)", Kind: kindText, MaxLen: knowledge.MaxDescriptionLen, Help: "At most " + strconv.Itoa(knowledge.MaxDescriptionLen) + " characters."},
}

// Fields are the create form's inputs, by name.
func (d knowledgeListData) Fields() map[string]fieldView {
	return fieldsOf(d.formState, knowledgeFields)
}

func (s *Server) listKnowledge(w http.ResponseWriter, r *http.Request) {
	s.renderKnowledgeList(w, r, http.StatusOK, knowledgeListData{})
}

func (s *Server) renderKnowledgeList(w http.ResponseWriter, r *http.Request, status int, d knowledgeListData) {
	pg, problems := adminPage(r)
	bases, total, err := s.KnowledgeBases.List(r.Context(), orgID(r), pg)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Bases, d.Pager = bases, newPager(r.URL, pg, total, problems)
	if len(problems) > 0 {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "knowledgebases", "Knowledge bases", "knowledge", d)
}

func (s *Server) createKnowledge(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	fr := newFormReader(r.PostForm, true)
	in := knowledge.Input{Name: fr.required("name"), Description: fr.text("description")}
	err := fr.err()
	if err == nil {
		var kb model.KnowledgeBase
		if kb, err = s.KnowledgeBases.Create(r.Context(), orgID(r), in); err == nil {
			http.Redirect(w, r, "/knowledge/"+kb.ID, http.StatusSeeOther)
			return
		}
	}
	errs, msg, ok := refusal(err)
	if !ok {
		s.fail(w, r, err)
		return
	}
	d := knowledgeListData{}
	d.Values, d.Errors, d.Message = fr.values, errs, msg
	s.renderKnowledgeList(w, r, http.StatusBadRequest, d)
}

// knowledgeData is one knowledge base: its sources, the form adding one,
// and the query form with what it retrieved.
type knowledgeData struct {
	knowledge.Detail
	Source formState
	Query  formState
	// Hits are the query's chunks; Asked says a query ran (none found is
	// an answer too).
	Hits  []knowledge.Hit
	Asked bool
	Added bool
}

var (
	sourceFields = []agentField{
		{Name: "displayName", Label: "Title", Kind: kindText, Required: true, MaxLen: knowledge.MaxDisplayNameLen, Help: "At most " + strconv.Itoa(knowledge.MaxDisplayNameLen) + " characters."},
		{Name: "content", Label: "Text", Kind: kindTextarea, Required: true, MaxLen: knowledge.MaxContentLen, Help: "Plain text, at most " + strconv.Itoa(knowledge.MaxContentLen) + " characters. It is split into chunks and indexed."},
	}
	queryFields = func() []agentField {
		chunks := agentField{Name: "chunks", Label: "Chunks", Kind: kindInt, Step: 1, Help: "1 to " + strconv.Itoa(knowledge.MaxChunks) + "; blank: " + strconv.Itoa(knowledge.DefaultChunks) + "."}
		chunks.Min, chunks.Max, chunks.HasMin, chunks.HasMax = between(1, knowledge.MaxChunks)
		threshold := agentField{Name: "similarityThreshold", Label: "Least score", Kind: kindFloat, Step: 0.01, Help: "0 to 1; blank: 0."}
		threshold.Min, threshold.Max, threshold.HasMin, threshold.HasMax = between(0, 1)
		return []agentField{
			{Name: "query", Label: "Question", Kind: kindText, Required: true, MaxLen: knowledge.MaxQueryLen, Help: "What a caller might ask; the chunks an agent with this base would get are shown."},
			chunks, threshold,
		}
	}()
)

// SourceFields and QueryFields are the two forms' inputs, by name.
func (d knowledgeData) SourceFields() map[string]fieldView { return fieldsOf(d.Source, sourceFields) }
func (d knowledgeData) QueryFields() map[string]fieldView  { return fieldsOf(d.Query, queryFields) }

func (s *Server) showKnowledge(w http.ResponseWriter, r *http.Request) {
	s.renderKnowledge(w, r, http.StatusOK, knowledgeData{Added: r.URL.Query().Get("added") == "1"})
}

func (s *Server) renderKnowledge(w http.ResponseWriter, r *http.Request, status int, d knowledgeData) {
	detail, err := s.KnowledgeBases.GetDetail(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	d.Detail = detail
	s.render(w, r, status, "knowledgebase", detail.Name, "knowledge", d)
}

func (s *Server) addKnowledgeSource(w http.ResponseWriter, r *http.Request) {
	kb, err := s.KnowledgeBases.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	fr := newFormReader(r.PostForm, true)
	in := knowledge.SourceInput{SourceType: opt.Value("text"), DisplayName: fr.required("displayName")}
	// The text is kept as written: leading and trailing lines are content.
	if content := r.PostForm.Get("content"); content != "" {
		in.Content = opt.Value(content)
	}
	fr.values["content"] = r.PostForm.Get("content")
	err = fr.err()
	if err == nil {
		if _, err = s.KnowledgeBases.AddSource(r.Context(), orgID(r), kb.ID, in); err == nil {
			http.Redirect(w, r, "/knowledge/"+kb.ID+"?added=1", http.StatusSeeOther)
			return
		}
	}
	errs, msg, ok := refusal(err)
	if !ok {
		s.failFind(w, r, err)
		return
	}
	d := knowledgeData{}
	d.Source.Values, d.Source.Errors, d.Source.Message = fr.values, errs, msg
	s.renderKnowledge(w, r, http.StatusBadRequest, d)
}

// queryKnowledge answers the "try a query" form with the chunks the API's
// query would return.
func (s *Server) queryKnowledge(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	fr := newFormReader(r.PostForm, true)
	in := knowledge.QueryInput{Query: fr.required("query"), Chunks: fr.number("chunks", true)}
	if v, ok := fr.raw("similarityThreshold"); ok && v != "" {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			fr.problems.Add("similarityThreshold", "must be a number")
		} else {
			in.SimilarityThreshold = opt.Value(x)
		}
	}
	d := knowledgeData{}
	d.Query.Values = fr.values
	err := fr.err()
	if err == nil {
		if d.Hits, err = s.KnowledgeBases.Query(r.Context(), orgID(r), r.PathValue("id"), in); err == nil {
			d.Asked = true
			s.renderKnowledge(w, r, http.StatusOK, d)
			return
		}
	}
	errs, msg, ok := refusal(err)
	if !ok {
		s.failFind(w, r, err)
		return
	}
	d.Query.Errors, d.Query.Message = errs, msg
	s.renderKnowledge(w, r, http.StatusBadRequest, d)
}

func (s *Server) confirmDeleteKnowledge(w http.ResponseWriter, r *http.Request) {
	kb, err := s.KnowledgeBases.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete "+kb.Name, "knowledge", confirmData{
		Question: "Delete the knowledge base “" + kb.Name + "” and its sources? Agents using it no longer retrieve from it.",
		Action:   "/knowledge/" + kb.ID + "/delete", Button: "Delete knowledge base", Cancel: "/knowledge/" + kb.ID,
	})
}

func (s *Server) deleteKnowledge(w http.ResponseWriter, r *http.Request) {
	if err := s.KnowledgeBases.Delete(r.Context(), orgID(r), r.PathValue("id")); err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/knowledge", http.StatusSeeOther)
}

func (s *Server) confirmDeleteSource(w http.ResponseWriter, r *http.Request) {
	src, err := s.KnowledgeBases.GetSource(r.Context(), orgID(r), r.PathValue("id"), r.PathValue("sourceId"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	base := "/knowledge/" + src.KnowledgeBaseID
	s.render(w, r, http.StatusOK, "confirm", "Delete "+src.DisplayName, "knowledge", confirmData{
		Question: "Delete the source “" + src.DisplayName + "” and its chunks?",
		Action:   base + "/sources/" + src.ID + "/delete", Button: "Delete source", Cancel: base,
	})
}

func (s *Server) deleteSource(w http.ResponseWriter, r *http.Request) {
	kbID := r.PathValue("id")
	if err := s.KnowledgeBases.DeleteSource(r.Context(), orgID(r), kbID, r.PathValue("sourceId")); err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/knowledge/"+kbID, http.StatusSeeOther)
}
