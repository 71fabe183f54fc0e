package main

import (
	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

// importSummary turns the store's import report into what view prints.
func importSummary(r store.ImportReport) view.ImportSummary {
	s := view.ImportSummary{Files: len(r.Files), Entries: r.Entries, Bytes: r.Bytes, Seconds: r.Duration.Seconds(),
		Warnings: []view.ImportWarning{}, Problems: []view.ImportProblem{}, Failures: []view.ImportFailure{}}
	for _, f := range r.Files {
		switch f.Outcome {
		case store.OutcomeNew:
			s.New++
		case store.OutcomeGrown:
			s.Grown++
		case store.OutcomeUnchanged:
			s.Unchanged++
		case store.OutcomeConflict:
			s.Conflicts++
			s.Failed++
		default:
			s.Failed++
		}
		if len(f.Unknown) > 0 {
			s.Warnings = append(s.Warnings, view.ImportWarning{File: f.Path, Entries: f.Unknown.Entries(),
				Types: f.Unknown.Names(), Message: f.Unknown.String()})
		}
		for _, p := range f.Problems {
			s.Problems = append(s.Problems, problem(f.Path, p))
		}
		if f.Err != nil {
			s.Failures = append(s.Failures, view.ImportFailure{File: f.Path, Outcome: f.Outcome.String(), Error: f.Err.Error()})
		}
	}
	return s
}

// warnings turns the store's warnings into what view prints.
func warnings(ws []store.Warning) []view.Warning {
	out := make([]view.Warning, len(ws))
	for i, w := range ws {
		out[i] = view.Warning{Where: w.Where(), Message: w.Unknown.String()}
	}
	return out
}

func problem(file string, le *jsonl.LineError) view.ImportProblem {
	p := view.ImportProblem{File: file, Line: le.Line, Message: le.Error()}
	if le.Path != "" {
		p.File = le.Path
	}
	if le.Err != nil {
		p.Message = le.Err.Error()
	}
	return p
}

// hitRows turns search hits into what view prints.
func hitRows(hits []store.Hit) []view.HitRow {
	rows := make([]view.HitRow, 0, len(hits))
	for _, h := range hits {
		r := view.HitRow{SessionID: h.SessionID, EntryID: h.EntryID, From: h.Type, Snippet: h.Snippet, OnActiveBranch: h.OnActiveBranch}
		if h.Role != "" {
			r.From = h.Role
		}
		if t, err := sessiontree.ParseTime(h.Timestamp); err == nil {
			r.Time = t
		}
		rows = append(rows, r)
	}
	return rows
}

// sessionRow turns a store list row into what view prints, its first
// message as pi's session list gives it ("(no messages)" for none).
func sessionRow(in store.SessionInfo) view.SessionRow {
	r := view.SessionRow{ID: in.ID, Name: in.Name, FirstMessage: in.ListInfo().FirstMessage, Cwd: in.Cwd,
		Entries: in.Entries, Messages: in.Messages}
	if t, err := sessiontree.ParseTime(in.UpdatedAt); err == nil {
		r.Updated = t
	}
	return r
}
