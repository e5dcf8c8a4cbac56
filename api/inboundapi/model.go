package inboundapi

type verifyQuery struct {
	Mode      string `query:"hub.mode" description:"Always subscribe."`
	Token     string `query:"hub.verify_token" description:"The verify token configured at the provider."`
	Challenge string `query:"hub.challenge" description:"Echoed back when the token matches."`
}

type receivedResp struct {
	Received int `json:"received"` // the events stored
}
