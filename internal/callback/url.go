package callback

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"transcriber/internal/errs"
)

// MaxURLLen is the longest callback_url, in bytes.
const MaxURLLen = 2048

const codeBadURL = "bad_callback_url"

func badURL(msg string) error { return errs.New(errs.Invalid, codeBadURL, msg) }

// CheckURL reports whether raw may be a job's callback_url: an absolute
// https URL of at most MaxURLLen bytes, with a host, no user name or
// password and no fragment; a host written as an IP address must be a
// public one. allowPrivate (CALLBACK_ALLOW_PRIVATE, local use and tests)
// lets http and any address through. The URL is not echoed in the error.
// It is only the first check: where the host name leads is checked again
// at every connection (Client).
func CheckURL(raw string, allowPrivate bool) error {
	if raw == "" || len(raw) > MaxURLLen || !utf8.ValidString(raw) {
		return badURL("callback_url must be a URL of 1 to 2048 bytes")
	}
	if strings.ContainsAny(raw, " \t\r\n\x00\\") {
		return badURL("callback_url must be a URL without spaces, control characters or backslashes")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return badURL("callback_url must be an absolute URL")
	case u.Scheme != "https" && (!allowPrivate || u.Scheme != "http"):
		return badURL("callback_url must be an https URL")
	case u.User != nil:
		return badURL("callback_url must not carry a user name or password")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return badURL("callback_url must not have a fragment")
	case u.Hostname() == "":
		return badURL("callback_url must name a host")
	}
	if port := u.Port(); port != "" && !validPort(port) {
		return badURL("callback_url has a port out of 1..65535")
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !allowPrivate && !Public(ip) {
		return badURL("callback_url must not point at a private, loopback, link-local or other internal address")
	}
	return nil
}

func validPort(p string) bool {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' || n > 65535 {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n >= 1 && n <= 65535
}

// blocked are address ranges beyond what netip's predicates name that a
// callback may not reach: "this network", carrier-grade NAT (which clouds
// use inside), IETF protocol assignments, benchmarking, reserved and
// broadcast; the documentation ranges, which no receiver has on the
// internet, so an address in one is a route somebody set up inside; and
// the IPv6 prefixes that carry an IPv4 address or tunnel to one (NAT64,
// 6to4, Teredo, IPv4-compatible ::a.b.c.d, SIIT's ::ffff:0:a.b.c.d, which
// Unmap does not unwrap) and so could lead to any of these, site-local
// (the deprecated fec0::/10, still routed inside some networks) and
// discard-only.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"), // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (and ::, ::1)
	netip.MustParsePrefix("::ffff:0:0:0/96"), // SIIT, IPv4-translated
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),      // discard-only
	netip.MustParsePrefix("2001::/32"),     // Teredo
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"), // site-local
}

// metadata is the cloud's metadata service, which hands out the
// function's credentials: link-local, so refused anyway, and named here so
// that no later change lets it through.
var metadata = netip.MustParseAddr("169.254.169.254")

// Public reports whether a callback may connect to ip: not loopback,
// private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local, multicast,
// unspecified, the metadata service or another internal, reserved,
// documentation or IPv4-carrying range (blocked).
// An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.Zone() != "" || ip == metadata {
		return false
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// publicAddr is Public for a dialer's "ip:port".
func publicAddr(address string) bool {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && Public(ip)
}
