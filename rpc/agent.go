package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/reasoning"
)

// agentRun runs agent/run: the run's events become agent/update and
// agent/message notifications, and the reply carries its result.
// $/cancelRequest on the request stops the run like agent/stop; the reply
// is then -32800 with the result as the error's data.
func (s *Server) agentRun(ctx context.Context, p *AgentRunParams) (*AgentRunResult, error) {
	const method = MethodAgentRun
	if strings.TrimSpace(p.Message) == "" {
		return nil, required(method, "message", "the user's question or task")
	}
	for i, m := range p.History {
		switch m.Role {
		case llm.RoleUser, llm.RoleAssistant, llm.RoleSystem:
		default:
			return nil, &paramError{field: fmt.Sprintf("history[%d].role", i),
				msg: fmt.Sprintf("must be user, assistant or system, got %q", m.Role)}
		}
	}
	s.mu.Lock()
	a, base, v := s.agent, s.settings, s.vault
	s.mu.Unlock()
	if a == nil || v == nil {
		return nil, errShutDown
	}
	settings := base.merge(p.Settings)
	if err := settings.validate(v.Root()); err != nil {
		return nil, err
	}
	unknown := p.Settings.Unknown()
	if len(unknown) > 0 {
		s.log.Warn("agent/run: unknown settings ignored", "settings", strings.Join(unknown, ", "))
	}
	if p.Settings != nil && (len(p.Settings.Excludes) > 0 || p.Settings.ObsidianExcludes != nil) {
		s.log.Warn("agent/run: the excludes and obsidianExcludes settings only apply at initialize; ignored for this run")
	}
	var model llm.Model
	if o := p.Settings; o != nil && (o.Provider != "" || o.Model != "" || o.BaseURL != "") {
		m, err := s.newModel(ctx, settings)
		if err != nil {
			return nil, err
		}
		model = m
	}
	runID := p.RunID
	if runID == "" {
		runID = a.NewRunID()
	} else if a.Active(runID) {
		return nil, &paramError{field: "runId", msg: fmt.Sprintf("run %q is already active; pick another runId or omit it", runID)}
	}
	cfg := settings.agentConfig()
	runCtx := s.runsCtx

	obs := reasoning.NewObserver(reasoning.Config{
		Window:  settings.ReasoningWindow,
		Planner: cfg.Planner,
		Publish: func(content string) {
			s.notify(NotifyAgentMessage, AgentMessageParams{RunID: runID, Content: content})
		},
	})
	obs.Start(runCtx)
	defer obs.Stop()

	sinks := []agent.Sink{&updateSink{s: s, runID: runID}, obs}
	if settings.Trace != "" {
		tw, err := agent.CreateTrace(settings.Trace)
		if err != nil {
			return nil, &paramError{field: "settings.trace", msg: err.Error()}
		}
		defer func() {
			if err := tw.Close(); err != nil {
				s.log.Warn("writing the trace failed", "error", err)
			}
		}()
		sinks = append(sinks, tw)
	}

	res, err := a.Run(runCtx, agent.RunRequest{
		RunID:     runID,
		SessionID: p.SessionID,
		Message:   p.Message,
		History:   p.History,
		Config:    cfg,
		Model:     model,
		// The host cancelling the request stops the run at its next phase
		// boundary, as agent/stop does.
		Stop: ctx.Done(),
	}, agent.Tee(sinks...))
	obs.Stop()
	if err != nil {
		if errors.Is(err, agent.ErrDuplicateRun) {
			return nil, &paramError{field: "runId", msg: fmt.Sprintf("run %q is already active", runID)}
		}
		return nil, fmt.Errorf("agent run %s: %w", runID, err)
	}
	out := &AgentRunResult{
		RunID:           res.RunID,
		Answer:          res.Answer,
		Content:         obs.Content(),
		StopReason:      res.StopReason,
		Iterations:      res.Iterations,
		ElapsedMs:       res.ElapsedMs,
		Plan:            res.Plan,
		Capsule:         res.Capsule,
		Error:           res.Error,
		UnknownSettings: unknown,
	}
	if out.RunID == "" {
		out.RunID = runID
	}
	return out, nil
}

// agentStop runs agent/stop.
func (s *Server) agentStop(ctx context.Context, p *AgentStopParams) (*AgentStopResult, error) {
	if p.RunID == "" {
		return nil, required(MethodAgentStop, "runId", "the runId of an active agent/run")
	}
	s.mu.Lock()
	a := s.agent
	s.mu.Unlock()
	if a == nil {
		return nil, errShutDown
	}
	if err := a.Stop(p.RunID); err != nil {
		if errors.Is(err, agent.ErrUnknownRun) {
			return &AgentStopResult{Stopped: false}, nil
		}
		return nil, err
	}
	return &AgentStopResult{Stopped: true}, nil
}

// agentInput runs agent/input.
func (s *Server) agentInput(ctx context.Context, p *AgentInputParams) (*AgentInputResult, error) {
	if p.RunID == "" {
		return nil, required(MethodAgentInput, "runId", "the runId of the run that sent agent_request_input")
	}
	s.mu.Lock()
	a := s.agent
	s.mu.Unlock()
	if a == nil {
		return nil, errShutDown
	}
	if err := a.Input(p.RunID, p.Content); err != nil {
		if errors.Is(err, agent.ErrUnknownRun) {
			return &AgentInputResult{Accepted: false}, nil
		}
		return nil, err
	}
	return &AgentInputResult{Accepted: true}, nil
}

// updateSink maps a run's events to agent/update notifications. Emit is
// called from the run's goroutine, in order.
type updateSink struct {
	s     *Server
	runID string
}

func (u *updateSink) Emit(ev agent.Event) {
	for _, p := range updatesFor(u.runID, ev) {
		u.s.notify(NotifyAgentUpdate, p)
	}
}

// updatesFor maps one event to its agent/update notifications (none for
// events the protocol does not surface).
func updatesFor(runID string, ev agent.Event) []AgentUpdateParams {
	base := AgentUpdateParams{RunID: runID, Step: ev.Iteration}
	one := func(p AgentUpdateParams) []AgentUpdateParams { return []AgentUpdateParams{p} }
	switch ev.EventType {
	case agent.EventRunStarted:
		p, _ := ev.Payload.(agent.RunStartedPayload)
		base.UpdateType, base.Mode, base.MaxIterations = UpdateAgentStart, p.Mode, p.MaxIterations
		return one(base)
	case agent.EventTurnStarted:
		if p, ok := ev.Payload.(agent.TurnStartedPayload); ok && p.Iteration > 0 {
			base.Step = p.Iteration
		}
		base.UpdateType = UpdateAgentTurnStart
		return one(base)
	case agent.EventReasonEmitted:
		p, _ := ev.Payload.(agent.TextPayload)
		base.UpdateType, base.Content = UpdateAgentReason, p.Text
		return one(base)
	case agent.EventObserveEmitted:
		p, _ := ev.Payload.(agent.TextPayload)
		base.UpdateType, base.Content = UpdateAgentObserve, p.Text
		return one(base)
	case agent.EventToolInvoked:
		p, _ := ev.Payload.(agent.ToolInvokedPayload)
		base.UpdateType, base.Tool, base.CallID, base.Summary = UpdateToolStart, p.Tool, p.CallID, p.Summary
		base.Arguments = validRaw(p.Arguments)
		return one(base)
	case agent.EventToolReturned:
		p, _ := ev.Payload.(agent.ToolReturnedPayload)
		base.Tool, base.CallID, base.Summary, base.LatencyMs = p.Tool, p.CallID, p.Summary, p.LatencyMs
		if p.Success {
			base.UpdateType, base.Output = UpdateToolComplete, validRaw(p.Output)
		} else {
			base.UpdateType, base.Error = UpdateToolError, p.Error
		}
		return one(base)
	case agent.EventPlanAuthored, agent.EventPlanUpdated:
		p, _ := ev.Payload.(agent.PlanPayload)
		base.UpdateType, base.Plan = UpdatePlanUpdated, &p
		return one(base)
	case agent.EventPlanContinuation:
		p, _ := ev.Payload.(agent.PlanContinuationPayload)
		base.UpdateType, base.Content = UpdatePlanContinuation, p.Text
		return one(base)
	case agent.EventPlanReviewPending:
		base.UpdateType = UpdatePlanReviewPending
		if p, ok := ev.Payload.(agent.PlanPayload); ok {
			base.Plan = &p
		}
		return one(base)
	case agent.EventInputRequested:
		p, _ := ev.Payload.(agent.TextPayload)
		q := p.Text
		if q == "" {
			q, _ = p.Control["question"].(string)
		}
		base.UpdateType, base.Question = UpdateAgentRequestInput, q
		return one(base)
	case agent.EventInputTimeout:
		base.UpdateType = UpdateAgentRequestInputTimeout
		return one(base)
	case agent.EventRunTerminated:
		p, _ := ev.Payload.(agent.RunTerminatedPayload)
		base.StopReason, base.Iterations, base.ElapsedMs = p.StopReason, p.Iterations, p.ElapsedMs
		var out []AgentUpdateParams
		if p.StopReason == agent.StopStopped {
			stopped := base
			stopped.UpdateType = UpdateAgentStopped
			out = append(out, stopped)
		}
		base.UpdateType, base.Error = UpdateAgentCompletion, p.Error
		return append(out, base)
	}
	return nil
}

// validRaw returns raw if it is valid JSON, else raw as a JSON string, so
// that a model's malformed arguments cannot break the notification.
func validRaw(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}
