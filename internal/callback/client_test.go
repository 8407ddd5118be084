package callback_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/callback"
	"transcriber/internal/errs"
)

// counter is a TCP listener that counts the connections it accepts: the
// proof that a refused callback connected nowhere.
type counter struct {
	ln      net.Listener
	accepts atomic.Int64
}

func newCounter(t *testing.T) *counter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &counter{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.accepts.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return c
}

// dialer is a Dial hook that counts its calls and connects to the counter,
// wherever it was asked to go: any connection the client makes lands
// there.
func (c *counter) dial(calls *atomic.Int64) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		calls.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, c.ln.Addr().String())
	}
}

// resolver answers every name with addrs.
func resolver(addrs ...string) func(context.Context, string) ([]netip.Addr, error) {
	return func(context.Context, string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
}

var internal = []string{
	"127.0.0.1", "127.8.9.10", "::1", // loopback
	"10.0.0.1", "10.255.255.254", "172.16.0.1", "172.31.255.254", "192.168.0.1", "192.168.255.254", // private
	"fc00::1", "fd12:3456::1", // unique local (fc00::/7)
	"169.254.0.1", "fe80::1", // link-local
	"169.254.169.254", "::ffff:169.254.169.254", // the metadata service, also IPv4-mapped
	"224.0.0.1", "ff02::1", // multicast
	"0.0.0.0", "::", // unspecified
	"100.64.0.1", "64:ff9b::a00:1", // carrier-grade NAT; NAT64 of 10.0.0.1
	"::ffff:10.0.0.1", "::ffff:127.0.0.1", // IPv4-mapped private and loopback
}

// reserved are ranges neither private nor internal by netip's own
// predicates that still lead nowhere a receiver lives: the documentation
// ranges, the IPv6 forms that carry or tunnel to an IPv4 address
// (IPv4-compatible, SIIT, Teredo), site-local and discard-only.
var reserved = []string{
	"192.0.2.1", "198.51.100.7", "203.0.113.254", "2001:db8::1", "2001:db8:ffff::2", // documentation
	"::10.0.0.1", "::8.8.8.8", // IPv4-compatible, whatever it carries
	"::ffff:0:10.0.0.1", "::ffff:0:169.254.169.254", "::ffff:0:8.8.8.8", // SIIT, which Unmap leaves as it is
	"fec0::1", "feff:ffff::1", // site-local
	"2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
	"100::1", "100::ffff:ffff:ffff:ffff", // discard-only
}

// Each reserved range is refused everywhere the rules hold: as a literal
// in the URL (CheckURL, and the client's own check, without a dial), as
// what a name resolves to (no dial), and by the dialer's Control at
// connect. Addresses just beside the IPv4 and documentation ranges stay
// public, so the ranges are no wider than they should be.
func TestReservedRangesAreRefusedEverywhere(t *testing.T) {
	c := newCounter(t)
	_, port, _ := net.SplitHostPort(c.ln.Addr().String())
	for _, a := range reserved {
		ip := netip.MustParseAddr(a)
		require.False(t, callback.Public(ip), a)
		literal := "https://" + net.JoinHostPort(a, port) + "/cb"
		require.Equal(t, "bad_callback_url", errs.CodeOf(callback.CheckURL(literal, false)), a)

		var calls atomic.Int64
		client := callback.Client(callback.ClientOptions{Dial: c.dial(&calls)})
		resp, err := client.Post(literal, "application/json", strings.NewReader("{}"))
		if resp != nil {
			_ = resp.Body.Close()
		}
		require.ErrorContains(t, err, "internal address", "%s as a literal", a)

		client = callback.Client(callback.ClientOptions{Lookup: resolver(a), Dial: c.dial(&calls)})
		resp, err = client.Post("https://hooks.example.com/cb", "application/json", strings.NewReader("{}"))
		if resp != nil {
			_ = resp.Body.Close()
		}
		require.ErrorContains(t, err, "internal address", "%s as a name", a)
		require.Zero(t, calls.Load(), "%s: no dial", a)

		// The bound only keeps a broken rule from waiting out the dialer's
		// own timeout on an address that does not answer.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := callback.SafeDialer(false).DialContext(ctx, "tcp", net.JoinHostPort(a, "443"))
		cancel()
		if conn != nil {
			_ = conn.Close()
		}
		require.ErrorContains(t, err, "internal address", "%s at connect", a)
	}
	require.Zero(t, c.accepts.Load(), "no connection was made")

	for _, a := range []string{"192.0.1.255", "192.0.3.1", "198.51.99.1", "198.51.101.1", "203.0.112.1", "203.0.114.1",
		"2001:db9::1", "2001:db7::1", "2001:200::1", "2001:4860:4860::8888"} {
		require.True(t, callback.Public(netip.MustParseAddr(a)), a)
		require.NoError(t, callback.CheckURL("https://"+net.JoinHostPort(a, "443")+"/cb", false), a)
	}
}

func TestPublicRefusesInternalAddresses(t *testing.T) {
	for _, a := range internal {
		require.False(t, callback.Public(netip.MustParseAddr(a)), a)
	}
	for _, a := range []string{"93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "172.32.0.1", "192.169.0.1", "11.0.0.1"} {
		require.True(t, callback.Public(netip.MustParseAddr(a)), a)
	}
}

// Every internal address a name resolves to is refused before any
// connection is made; a public one is dialled (the control that shows the
// hook sees connections).
func TestClientRefusesNamesThatLeadInsideWithoutConnecting(t *testing.T) {
	c := newCounter(t)
	for _, a := range internal {
		var calls atomic.Int64
		client := callback.Client(callback.ClientOptions{Lookup: resolver(a), Dial: c.dial(&calls)})
		resp, err := client.Post("https://hooks.example.com/cb", "application/json", strings.NewReader("{}"))
		if resp != nil {
			_ = resp.Body.Close()
		}
		require.Error(t, err, a)
		require.ErrorContains(t, err, "internal address", a)
		require.Zero(t, calls.Load(), "%s: no dial", a)
	}
	require.Zero(t, c.accepts.Load(), "no connection was made")

	var calls atomic.Int64
	client := callback.Client(callback.ClientOptions{Lookup: resolver("10.0.0.1", "93.184.216.34"), Dial: c.dial(&calls)})
	resp, err := client.Post("https://hooks.example.com/cb", "application/json", strings.NewReader("{}"))
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err, "the counter speaks no TLS")
	require.Equal(t, int64(1), calls.Load(), "only the public address is dialled")
}

// An address written in the URL is judged the same way.
func TestClientRefusesLiteralInternalAddresses(t *testing.T) {
	c := newCounter(t)
	var calls atomic.Int64
	client := callback.Client(callback.ClientOptions{Dial: c.dial(&calls)})
	_, port, _ := net.SplitHostPort(c.ln.Addr().String())
	for _, host := range []string{"127.0.0.1", "[::1]", "10.1.2.3", "172.16.5.4", "192.168.1.1", "[fc00::1]", "169.254.169.254", "[fe80::1]"} {
		resp, err := client.Post(fmt.Sprintf("https://%s:%s/cb", host, port), "application/json", strings.NewReader("{}"))
		if resp != nil {
			_ = resp.Body.Close()
		}
		require.ErrorContains(t, err, "internal address", host)
	}
	require.Zero(t, calls.Load())
	require.Zero(t, c.accepts.Load())
}

// The dialer's own check: whatever a lookup said, the socket never
// connects to an internal address.
func TestSafeDialerRefusesAtConnect(t *testing.T) {
	c := newCounter(t)
	_, err := callback.SafeDialer(false).DialContext(context.Background(), "tcp", c.ln.Addr().String())
	require.ErrorContains(t, err, "internal address")
	require.Zero(t, c.accepts.Load())

	conn, err := callback.SafeDialer(true).DialContext(context.Background(), "tcp", c.ln.Addr().String())
	require.NoError(t, err, "CALLBACK_ALLOW_PRIVATE lets it through")
	_ = conn.Close()
}

// A redirect is the answer, not a way elsewhere: its target is never
// asked.
func TestClientFollowsNoRedirect(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer target.Close()
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/inside", http.StatusTemporaryRedirect)
	}))
	defer origin.Close()
	client := callback.Client(callback.ClientOptions{AllowPrivate: true, TLS: origin.Client().Transport.(*http.Transport).TLSClientConfig})
	resp, err := client.Post(origin.URL, "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	require.Zero(t, hits.Load(), "the redirect's target is never asked")
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{
		"https://hooks.example.com/transcriber",
		"https://hooks.example.com:8443/a/b?token=x&y=1",
		"https://[2606:4700:4700::1111]/cb",
		"https://" + strings.Repeat("a", callback.MaxURLLen-len("https://")),
	} {
		require.NoError(t, callback.CheckURL(ok, false), ok)
	}
	for what, bad := range map[string]string{
		"empty":             "",
		"too long":          "https://" + strings.Repeat("a", callback.MaxURLLen),
		"http":              "http://hooks.example.com/",
		"relative":          "/cb",
		"no host":           "https:///cb",
		"other scheme":      "ftp://hooks.example.com/",
		"userinfo":          "https://user:pass@hooks.example.com/",
		"user only":         "https://user@hooks.example.com/",
		"fragment":          "https://hooks.example.com/#x",
		"loopback literal":  "https://127.0.0.1/",
		"private literal":   "https://10.0.0.1/",
		"metadata literal":  "https://169.254.169.254/latest/meta-data",
		"ipv6 loopback":     "https://[::1]/",
		"port 0":            "https://hooks.example.com:0/",
		"port out of range": "https://hooks.example.com:70000/",
		"space":             "https://hooks.example.com/a b",
		"backslash":         "https://hooks.example.com\\@10.0.0.1/",
		"opaque":            "https:hooks.example.com",
		"not valid UTF-8":   "https://hooks.example.com/\xff",
	} {
		err := callback.CheckURL(bad, false)
		require.Error(t, err, what)
		require.Equal(t, errs.Invalid, errs.KindOf(err), what)
		require.Equal(t, "bad_callback_url", errs.CodeOf(err), what)
		if bad != "" {
			require.NotContains(t, err.Error(), bad, "%s: the URL is not echoed", what)
		}
	}
	require.NoError(t, callback.CheckURL("http://127.0.0.1:8080/cb", true), "CALLBACK_ALLOW_PRIVATE lifts the scheme and address rules")
	require.Error(t, callback.CheckURL("http://user:pw@127.0.0.1/", true), "but not the rest")
}
