package llm

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects one request follows, as net/http's
// default policy does.
const maxRedirects = 10

// credentialHeaders are the request headers that carry a key: they are
// never sent to an origin other than the one the key was meant for.
var credentialHeaders = []string{"Authorization", "Api-Key", "Proxy-Authorization", "Cookie"}

// keepKeyAtHome returns a copy of hc (a new client when nil) whose redirects
// carry no credentials to another origin. net/http drops them only when the
// host name changes, so a model server answering 307 to another port of the
// same host (another program's, or a logging proxy) would get the key; an
// origin here is the scheme, the host and the port.
func keepKeyAtHome(hc *http.Client) *http.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(via[0].URL, req.URL) {
			for _, h := range credentialHeaders {
				req.Header.Del(h)
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (an absent port is the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
