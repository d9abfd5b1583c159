package meshadopt

// Result is what a finished check or run said: its exit status and the events an installer
// acts on, kept as they were read.
type Result struct {
	// Exit is the command's exit status (-1 when a signal ended it).
	Exit int
	// Run is the stream's first line: the schema, the modules, the mesh.
	Run *RunEvent
	// Locks are the lock events, in order: what the run took and found.
	Locks []*LockEvent
	// Plans are each module's plan, made in preflight.
	Plans []*PlanEvent
	// Effect is what preflight predicted the pushes do, when every module checked.
	Effect *EffectEvent
	// Outcomes are each module's outcome, in the order the modules were asked for.
	Outcomes []*OutcomeEvent
	// Summary is the run's summary, when it got that far.
	Summary *SummaryEvent
	// Last is the stream's last line: an *EndEvent, *InterruptedEvent or *ErrorEvent, or
	// something else when the stream was cut short.
	Last Event
}

// keep files the event under the field it belongs to.
func (r *Result) keep(event Event) {
	switch e := event.(type) {
	case *RunEvent:
		r.Run = e
	case *LockEvent:
		r.Locks = append(r.Locks, e)
	case *PlanEvent:
		r.Plans = append(r.Plans, e)
	case *EffectEvent:
		r.Effect = e
	case *OutcomeEvent:
		r.Outcomes = append(r.Outcomes, e)
	case *SummaryEvent:
		r.Summary = e
	}
	r.Last = event
}
