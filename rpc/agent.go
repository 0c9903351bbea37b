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
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/service"
)

// AgentRun runs agent/run: the run's events become agent/update and
// agent/message notifications, and the reply carries its result.
// $/cancelRequest on the request stops the run like agent/stop; the reply
// is then -32800 with the result as the error's data.
func (s *Server) AgentRun(ctx context.Context, p *protocol.AgentRunParams) (*protocol.AgentRunResult, error) {
	const method = protocol.MethodAgentRun
	if strings.TrimSpace(p.Message) == "" {
		return nil, required(method, "message", "the user's question or task")
	}
	for i, m := range p.History {
		switch m.Role {
		case llm.RoleUser, llm.RoleAssistant, llm.RoleSystem:
		default:
			return nil, fieldError(fmt.Sprintf("history[%d].role", i), "must be user, assistant or system, got %q", m.Role)
		}
	}
	svc, err := s.open()
	if err != nil {
		return nil, err
	}
	if err := checkNumbers(p.Settings); err != nil {
		return nil, err
	}
	overrides := settingsOf(p.Settings).Named(hostName)
	settings, err := svc.RunSettings(overrides)
	if err != nil {
		return nil, err
	}
	unknown := p.Settings.Unknown()
	if len(unknown) > 0 {
		s.log.Warn("agent/run: unknown settings ignored", "settings", strings.Join(unknown, ", "))
	}
	if p.Settings != nil && (len(p.Settings.Excludes) > 0 || p.Settings.ObsidianExcludes != nil) {
		s.log.Warn("agent/run: the excludes and obsidianExcludes settings only apply at initialize; ignored for this run")
	}
	a := svc.Agent()
	runID := p.RunID
	if runID == "" {
		runID = a.NewRunID()
	} else if a.Active(runID) {
		return nil, fieldError("runId", "run %q is already active; pick another runId or omit it", runID)
	}

	obs := reasoning.NewObserver(reasoning.Config{
		Window:  settings.ReasoningWindow,
		Planner: settings.RunConfig().Planner,
		// A streamed answer would otherwise send the whole message again
		// for every few words.
		AnswerInterval: protocol.AnswerUpdateInterval,
		Publish: func(content string) {
			_ = s.client.AgentMessage(ctx, &protocol.AgentMessageParams{RunID: runID, Content: content})
		},
	})
	obs.Start(s.runsCtx)
	defer obs.Stop()

	res, err := svc.Run(s.runsCtx, service.RunRequest{
		RunID:     runID,
		SessionID: p.SessionID,
		Message:   p.Message,
		History:   historyOf(p.History),
		Settings:  overrides,
		// The host cancelling the request stops the run at its next phase
		// boundary, as agent/stop does.
		Stop: ctx.Done(),
		// With allowEdits, each edit is a vault/applyEdit request.
		Approver: hostApprover{s: s, runID: runID},
	}, agent.Tee(&updateSink{client: s.client, runID: runID}, obs))
	obs.Stop()
	if err != nil {
		if errors.Is(err, agent.ErrDuplicateRun) {
			return nil, fieldError("runId", "run %q is already active", runID)
		}
		var se *service.SettingError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("agent run %s: %w", runID, err)
	}
	out := wireRunResult(res, obs.Content(), unknown)
	if out.RunID == "" {
		out.RunID = runID
	}
	return out, nil
}

// AgentStop runs agent/stop.
func (s *Server) AgentStop(ctx context.Context, p *protocol.AgentStopParams) (*protocol.AgentStopResult, error) {
	if p.RunID == "" {
		return nil, required(protocol.MethodAgentStop, "runId", "the runId of an active agent/run")
	}
	svc, err := s.open()
	if err != nil {
		return nil, err
	}
	if err := svc.Agent().Stop(p.RunID); err != nil {
		if errors.Is(err, agent.ErrUnknownRun) {
			return &protocol.AgentStopResult{Stopped: false}, nil
		}
		return nil, err
	}
	return &protocol.AgentStopResult{Stopped: true}, nil
}

// AgentInput runs agent/input.
func (s *Server) AgentInput(ctx context.Context, p *protocol.AgentInputParams) (*protocol.AgentInputResult, error) {
	if p.RunID == "" {
		return nil, required(protocol.MethodAgentInput, "runId", "the runId of the run that sent agent_request_input")
	}
	svc, err := s.open()
	if err != nil {
		return nil, err
	}
	if err := svc.Agent().Input(p.RunID, p.Content); err != nil {
		if errors.Is(err, agent.ErrUnknownRun) {
			return &protocol.AgentInputResult{Accepted: false}, nil
		}
		return nil, err
	}
	return &protocol.AgentInputResult{Accepted: true}, nil
}

// updateSink maps a run's events to agent/update notifications. Emit is
// called from the run's goroutine, in order.
type updateSink struct {
	client protocol.Client
	runID  string
}

func (u *updateSink) Emit(ev agent.Event) {
	for _, p := range updatesFor(u.runID, ev) {
		_ = u.client.AgentUpdate(context.Background(), &p)
	}
}

// updatesFor maps one event to its agent/update notifications (none for
// events the protocol does not surface).
func updatesFor(runID string, ev agent.Event) []protocol.AgentUpdateParams {
	base := protocol.AgentUpdateParams{RunID: runID, Step: ev.Iteration}
	one := func(p protocol.AgentUpdateParams) []protocol.AgentUpdateParams {
		return []protocol.AgentUpdateParams{p}
	}
	switch ev.EventType {
	case agent.EventRunStarted:
		p, _ := ev.Payload.(agent.RunStartedPayload)
		base.UpdateType, base.Mode, base.MaxIterations = protocol.UpdateAgentStart, p.Mode, p.MaxIterations
		return one(base)
	case agent.EventTurnStarted:
		if p, ok := ev.Payload.(agent.TurnStartedPayload); ok && p.Iteration > 0 {
			base.Step = p.Iteration
		}
		base.UpdateType = protocol.UpdateAgentTurnStart
		return one(base)
	case agent.EventReasonEmitted:
		p, _ := ev.Payload.(agent.TextPayload)
		base.UpdateType, base.Content = protocol.UpdateAgentReason, p.Text
		return one(base)
	case agent.EventObserveEmitted:
		p, _ := ev.Payload.(agent.TextPayload)
		base.UpdateType, base.Content = protocol.UpdateAgentObserve, p.Text
		return one(base)
	case agent.EventToolInvoked:
		p, _ := ev.Payload.(agent.ToolInvokedPayload)
		base.UpdateType, base.Tool, base.CallID, base.Summary = protocol.UpdateToolStart, p.Tool, p.CallID, p.Summary
		base.Arguments = validRaw(p.Arguments)
		return one(base)
	case agent.EventToolReturned:
		p, _ := ev.Payload.(agent.ToolReturnedPayload)
		base.Tool, base.CallID, base.Summary, base.LatencyMs = p.Tool, p.CallID, p.Summary, p.LatencyMs
		if p.Success {
			base.UpdateType, base.Output = protocol.UpdateToolComplete, validRaw(p.Output)
		} else {
			base.UpdateType, base.Error = protocol.UpdateToolError, p.Error
		}
		return one(base)
	case agent.EventPlanAuthored, agent.EventPlanUpdated:
		p, _ := ev.Payload.(agent.PlanPayload)
		base.UpdateType, base.Plan = protocol.UpdatePlanUpdated, wirePlan(p)
		return one(base)
	case agent.EventPlanContinuation:
		p, _ := ev.Payload.(agent.PlanContinuationPayload)
		base.UpdateType, base.Content = protocol.UpdatePlanContinuation, p.Text
		return one(base)
	case agent.EventPlanReviewPending:
		base.UpdateType = protocol.UpdatePlanReviewPending
		if p, ok := ev.Payload.(agent.PlanPayload); ok {
			base.Plan = wirePlan(p)
		}
		return one(base)
	case agent.EventInputRequested:
		p, _ := ev.Payload.(agent.TextPayload)
		q := p.Text
		if q == "" {
			q, _ = p.Control["question"].(string)
		}
		base.UpdateType, base.Question = protocol.UpdateAgentRequestInput, q
		return one(base)
	case agent.EventInputTimeout:
		base.UpdateType = protocol.UpdateAgentRequestInputTimeout
		return one(base)
	case agent.EventRunTerminated:
		p, _ := ev.Payload.(agent.RunTerminatedPayload)
		base.StopReason, base.Iterations, base.ElapsedMs = p.StopReason, p.Iterations, p.ElapsedMs
		var out []protocol.AgentUpdateParams
		if p.StopReason == agent.StopStopped {
			stopped := base
			stopped.UpdateType = protocol.UpdateAgentStopped
			out = append(out, stopped)
		}
		base.UpdateType, base.Error = protocol.UpdateAgentCompletion, p.Error
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
