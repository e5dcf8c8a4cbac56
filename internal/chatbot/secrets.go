package chatbot

import (
	"maps"
	"strconv"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/secrets"
	"wharf/models"
)

// The secrets of the bot's configuration are write-only (docs/API.md,
// "Secrets in configurations"): an api_fetch step's header values and the
// credentials in its URL, and those in an api AI context's URL, are
// answered masked to everyone who reads the chatbot (every Agent does);
// an update that sends the mask back keeps the stored value, for the same
// scheme, host and port.

// MaskSteps is steps as the API answers them: every api_fetch step's
// header values and URL credentials masked. The stored steps are not
// changed.
func MaskSteps(steps []models.FlowStep) []models.FlowStep {
	if steps == nil {
		return nil
	}
	out := make([]models.FlowStep, len(steps))
	for i, st := range steps {
		if st.APIConfig != nil {
			c := *st.APIConfig
			c.URL = secrets.MaskURL(c.URL)
			c.Headers = secrets.MaskHeaders(c.Headers)
			st.APIConfig = &c
		}
		out[i] = st
	}
	return out
}

// MaskContext is an AI context's content as the API answers it: an api
// context's URL with its credentials masked.
func MaskContext(contextType, content string) string {
	if contextType == "api" {
		return secrets.MaskURL(content)
	}
	return content
}

// keepStepSecrets resolves the masked values of the given steps against
// the stored ones (nil on create: nothing to keep). A step's stored
// counterpart is the stored api_fetch step of the same step_name when
// exactly one has it, else the one of the same step_order; its URL must
// keep its scheme, host and port for a masked value to be kept.
func keepStepSecrets(in, stored []models.FlowStep) ([]models.FlowStep, error) {
	out := make([]models.FlowStep, len(in))
	for i, st := range in {
		out[i] = st
		if st.APIConfig == nil {
			continue
		}
		where := "steps[" + strconv.Itoa(i) + "].api_config"
		var was models.APIConfig
		if c := counterpart(st, stored); c != nil {
			was = *c
		}
		c := *st.APIConfig
		url, err := secrets.KeepURL(c.URL, was.URL)
		if err != nil {
			return nil, apperr.Invalidf("%s.url: %v", where, err)
		}
		headers, err := secrets.KeepHeaders(c.Headers, was.Headers, secrets.SameOrigin(c.URL, was.URL))
		if err != nil {
			return nil, apperr.Invalidf("%s.headers.%v", where, err)
		}
		c.URL, c.Headers = url, headers
		c.ResponseMapping = maps.Clone(c.ResponseMapping)
		out[i].APIConfig = &c
	}
	return out, nil
}

func counterpart(st models.FlowStep, stored []models.FlowStep) *models.APIConfig {
	var byName, byOrder *models.APIConfig
	named := 0
	for _, s := range stored {
		if s.APIConfig == nil {
			continue
		}
		if st.StepName != "" && s.StepName == st.StepName {
			named++
			byName = s.APIConfig
		}
		if s.StepOrder == st.StepOrder {
			byOrder = s.APIConfig
		}
	}
	if named == 1 {
		return byName
	}
	return byOrder
}

// keepContextSecret resolves a masked api context URL against the stored
// one.
func keepContextSecret(in *string, stored *models.AIContext) error {
	if in == nil {
		return nil
	}
	was := ""
	if stored != nil && stored.ContextType == "api" {
		was = stored.Content
	}
	kept, err := secrets.KeepURL(*in, was)
	if err != nil {
		return apperr.Invalidf("content: %v", err)
	}
	*in = kept
	return nil
}

// keepFlowSecrets resolves the masked values of a create or update's steps
// (when given) against the stored steps.
func keepFlowSecrets(in *FlowInput, stored []models.FlowStep) error {
	if in.Steps == nil {
		return nil
	}
	steps, err := keepStepSecrets(*in.Steps, stored)
	if err != nil {
		return err
	}
	in.Steps = &steps
	return nil
}
