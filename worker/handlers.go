package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/hibiken/asynq"

	"wharf/internal/accounts"
	"wharf/internal/campaigns"
	"wharf/internal/chatbot"
	"wharf/internal/dataops"
	"wharf/internal/docframe"
	"wharf/internal/identity"
	"wharf/internal/inbound"
	"wharf/internal/messaging"
	"wharf/internal/templates"
	"wharf/internal/webhooks"
	"wharf/internal/wharfapp"
	"wharf/internal/wharfnotify"
	"wharf/jobs"
)

// Handlers are the domain services the job handlers call. Each handler
// decodes its typed payload and calls one domain method; the domain methods
// are idempotent.
type Handlers struct {
	Log       *slog.Logger
	Identity  *identity.Service
	Accounts  *accounts.Service
	Messaging *messaging.Service
	Webhooks  *webhooks.Service
	Inbound   *inbound.Service
	Templates *templates.Service
	Campaigns *campaigns.Service
	Chatbot   *chatbot.Service
	DataOps   *dataops.Service
	Wharf     *wharfapp.Service
	// Notify is the integration's notifications (nil: their jobs are not
	// handled; it needs its Sender and docframe.New with it as hook and
	// event sink).
	Notify *wharfnotify.Service
	// Frame is the document framework: it builds DocTypes' field indexes.
	Frame *docframe.Service
	// Subscribers consume the events outbox's events as they are
	// dispatched, before the webhooks get them (the framework's projector).
	Subscribers []webhooks.Subscriber
}

// Register adds every job handler to mux.
func (h *Handlers) Register(mux *asynq.ServeMux) {
	mux.HandleFunc(jobs.TypeAPIKeyTouch, handle(func(ctx context.Context, p jobs.APIKeyTouch) error {
		return h.Identity.TouchAPIKey(ctx, p.OrganizationID, p.APIKeyID, p.UsedAt)
	}))
	mux.HandleFunc(jobs.TypePurgeRefreshTokens, handle(func(ctx context.Context, _ jobs.PurgeRefreshTokens) error {
		n, err := h.Identity.PurgeRefreshTokens(ctx)
		if err == nil && n > 0 {
			h.Log.Info("purged refresh tokens", "count", n)
		}
		return err
	}))
	mux.HandleFunc(jobs.TypeInboundProcess, handle(func(ctx context.Context, p jobs.InboundProcess) error {
		return h.Inbound.Process(ctx, p.OrganizationID, p.AccountID, p.ContactKey)
	}))
	mux.HandleFunc(jobs.TypeInboundStatuses, handle(func(ctx context.Context, p jobs.InboundStatuses) error {
		return h.Inbound.ProcessStatuses(ctx, p.OrganizationID, p.AccountID)
	}))
	mux.HandleFunc(jobs.TypeInboundSweep, handle(func(ctx context.Context, _ jobs.InboundSweep) error {
		n, err := h.Inbound.Sweep(ctx)
		if n > 0 {
			h.Log.Warn("re-enqueued inbound events whose task was lost", "contacts", n)
		}
		return err
	}))
	mux.HandleFunc(jobs.TypeChatbotEvaluate, handle(func(ctx context.Context, p jobs.ChatbotEvaluate) error {
		return h.Chatbot.Evaluate(ctx, p.OrganizationID, p.ContactID)
	}))
	mux.HandleFunc(jobs.TypeChatbotSweep, handle(func(ctx context.Context, _ jobs.ChatbotSweep) error {
		n, err := h.Chatbot.Sweep(ctx)
		if n > 0 {
			h.Log.Warn("re-enqueued chatbot evaluations whose task was lost", "contacts", n)
		}
		return err
	}))
	mux.HandleFunc(jobs.TypeMessageSend, handle(func(ctx context.Context, p jobs.MessageSend) error {
		return h.Messaging.SendQueuedBatch(ctx, p.OrganizationID, p.MessageID, lastAttempt(ctx))
	}))
	mux.HandleFunc(jobs.TypeMediaFetch, handle(func(ctx context.Context, p jobs.MediaFetch) error {
		return h.Messaging.FetchMedia(ctx, p.OrganizationID, p.MessageID, lastAttempt(ctx))
	}))
	mux.HandleFunc(jobs.TypeMediaSweep, handle(func(ctx context.Context, _ jobs.MediaSweep) error {
		n, err := h.Messaging.SweepMedia(ctx)
		if n > 0 {
			h.Log.Warn("re-enqueued media fetches whose task was lost", "messages", n)
		}
		return err
	}))
	mux.HandleFunc(jobs.TypeMessageSweep, handle(func(ctx context.Context, _ jobs.MessageSweep) error {
		requeued, failed, err := h.Messaging.SweepUnconfirmed(ctx)
		if requeued+failed > 0 {
			h.Log.Warn("settled outbound messages", "requeued", requeued, "failed_unknown_outcome", failed)
		}
		return err
	}))
	mux.HandleFunc(jobs.TypeAccountRefresh, handle(func(ctx context.Context, p jobs.AccountRefresh) error {
		return h.Accounts.Refresh(ctx, p.OrganizationID, p.AccountID)
	}))
	mux.HandleFunc(jobs.TypeWebhookDispatch, handle(func(ctx context.Context, p jobs.WebhookDispatch) error {
		return h.Webhooks.Dispatch(ctx, p.OrganizationID, p.EventID, h.Subscribers...)
	}))
	mux.HandleFunc(jobs.TypeWebhookDeliver, handle(func(ctx context.Context, p jobs.WebhookDeliver) error {
		return h.Webhooks.Deliver(ctx, p.OrganizationID, p.WebhookID, p.EventID, p.Attempt)
	}))
	mux.HandleFunc(jobs.TypeDocframeIndexes, handle(func(ctx context.Context, p jobs.DocframeIndexes) error {
		return h.Frame.BuildIndexes(ctx, p.OrganizationID, p.Doctype, p.Drop)
	}))
	mux.HandleFunc(jobs.TypeDocframeIndexSweep, handle(func(ctx context.Context, _ jobs.DocframeIndexSweep) error {
		built, dropped, err := h.Frame.SweepIndexes(ctx)
		if built+dropped > 0 {
			h.Log.Warn("the index sweep made good what lost or failed builds left", "built", built, "dropped", dropped)
		}
		return err
	}))
	mux.HandleFunc(jobs.TypeWharfTemplateSubmit, handle(func(ctx context.Context, p jobs.WharfTemplateSubmit) error {
		return h.Wharf.SubmitTemplate(ctx, p.OrganizationID, p.Name)
	}))
	mux.HandleFunc(jobs.TypeWharfSweep, handle(func(ctx context.Context, _ jobs.WharfSweep) error {
		_, err := h.Wharf.SweepUnsubmitted(ctx)
		return err
	}))
	mux.HandleFunc(jobs.TypeTemplateSync, func(ctx context.Context, t *asynq.Task) error {
		p, err := jobs.Decode[jobs.TemplateSync](t)
		if err != nil {
			return err
		}
		res, err := h.Templates.Sync(ctx, p.OrganizationID, p.AccountID)
		if err != nil {
			return err
		}
		b, _ := json.Marshal(res)
		_, err = t.ResultWriter().Write(b) // read by the endpoint that waits
		return err
	})
	mux.HandleFunc(jobs.TypeImport, func(ctx context.Context, t *asynq.Task) error {
		p, err := jobs.Decode[jobs.Import](t)
		if err != nil {
			return err
		}
		// Progress and then the result go to the task's result (the asynq UI).
		_, err = h.DataOps.RunImport(ctx, p.OrganizationID, p.ImportID, t.ResultWriter())
		if err != nil && (lastAttempt(ctx) || errors.Is(err, asynq.SkipRetry)) {
			if ferr := h.DataOps.FailImport(context.WithoutCancel(ctx), p.OrganizationID, p.ImportID, err); ferr != nil {
				h.Log.Warn("cannot record a failed import", "import_id", p.ImportID, "error", ferr)
			}
		}
		return err
	})
	mux.HandleFunc(jobs.TypeImportPurge, handle(func(ctx context.Context, _ jobs.ImportPurge) error {
		n, err := h.DataOps.PurgeImports(ctx)
		if n > 0 {
			h.Log.Info("deleted imports past their retention", "imports", n)
		}
		return err
	}))
	mux.HandleFunc(jobs.TypeCampaignLane, handle(func(ctx context.Context, p jobs.CampaignLane) error {
		return h.Campaigns.RunLane(ctx, p.OrganizationID, p.CampaignID, p.Generation)
	}))
	mux.HandleFunc(jobs.TypeCampaignRecount, handle(func(ctx context.Context, p jobs.CampaignRecount) error {
		return h.Campaigns.Recount(ctx, p.OrganizationID, p.CampaignID)
	}))
	mux.HandleFunc(jobs.TypeCampaignStartDue, handle(func(ctx context.Context, _ jobs.CampaignStartDue) error {
		// Recurring campaigns' due occurrences first: each creates a run
		// scheduled for now, which StartDue below starts in this tick.
		if n, err := h.Campaigns.FireDue(ctx); err != nil {
			return err
		} else if n > 0 {
			h.Log.Info("recurring campaigns' occurrences fired", "count", n)
		}
		n, err := h.Campaigns.StartDue(ctx)
		if n > 0 {
			h.Log.Info("scheduled campaigns started", "count", n)
		}
		return err
	}))
	mux.HandleFunc(jobs.TypeCampaignReplies, handle(func(ctx context.Context, _ jobs.CampaignReplies) error {
		_, err := h.Campaigns.SweepReplies(ctx)
		return err
	}))
	mux.HandleFunc(jobs.TypeCampaignSweep, handle(func(ctx context.Context, _ jobs.CampaignSweep) error {
		res, err := h.Campaigns.Sweep(ctx)
		if res != nil && res.Unknown+int64(res.Restarted) > 0 {
			h.Log.Warn("campaign sweep", "recipients_unknown", res.Unknown, "campaigns_restarted", res.Restarted)
		}
		return err
	}))
	if h.Notify != nil {
		h.registerNotify(mux)
	}
	mux.HandleFunc(jobs.TypeEventsSweep, handle(func(ctx context.Context, _ jobs.EventsSweep) error {
		n, err := h.Webhooks.SweepUndispatched(ctx)
		if n > 0 {
			h.Log.Warn("re-enqueued webhook events whose dispatch was lost", "events", n)
		}
		return err
	}))
}

// registerNotify adds the notifications' jobs.
func (h *Handlers) registerNotify(mux *asynq.ServeMux) {
	mux.HandleFunc(jobs.TypeNotifySend, handle(func(ctx context.Context, p jobs.NotifySend) error {
		return h.Notify.Deliver(ctx, p.OrganizationID, p.SendID)
	}))
	mux.HandleFunc(jobs.TypeNotifyRun, handle(func(ctx context.Context, p jobs.NotifyRun) error {
		return h.Notify.Run(ctx, p.OrganizationID, p.Notification, p.Tick)
	}))
	mux.HandleFunc(jobs.TypeNotifyTick, handle(func(ctx context.Context, p jobs.NotifyTick) error {
		_, err := h.Notify.Tick(ctx, p.Tick)
		return err
	}))
}

// handle decodes the payload (undecodable payloads skip retries) and calls fn.
func handle[P jobs.Payload](fn func(context.Context, P) error) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		p, err := jobs.Decode[P](t)
		if err != nil {
			return err
		}
		return fn(ctx, p)
	}
}

// lastAttempt reports whether this run is the task's last try.
func lastAttempt(ctx context.Context) bool {
	retried, ok1 := asynq.GetRetryCount(ctx)
	maxRetry, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && retried >= maxRetry
}
