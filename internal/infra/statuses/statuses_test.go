package statuses

import (
	"strconv"
	"testing"
	"time"

	"wharf/platform"
)

func st(id, status string, ts int64) platform.Status {
	return platform.Status{ID: id, Status: status, Timestamp: strconv.FormatInt(ts, 10)}
}

func TestReduce(t *testing.T) {
	now := time.Unix(2000, 0)
	out := Reduce([]platform.Status{
		st("a", "sent", 100), st("a", "delivered", 110), st("a", "read", 120), st("a", "sent", 105), // duplicate, later
		st("b", "read", 200), // read without delivered counts as both
		st("c", "sent", 300), {ID: "c", Status: "failed", Timestamp: "310", Errors: []platform.StatusError{{Code: 131026, Title: "Undeliverable"}}},
		st("d", "delivered", 400), {ID: "d", Status: "failed", Timestamp: "410"}, // failure after delivery does not count
		{ID: "e", Status: "deleted", Timestamp: "1"}, // unknown status: dropped
	}, now)
	if len(out) != 4 {
		t.Fatalf("%d outcomes", len(out))
	}
	a, b, c, d := out[0], out[1], out[2], out[3]
	if a.Final != "read" || a.SentAt.Unix() != 100 || a.DeliveredAt.Unix() != 110 || a.ReadAt.Unix() != 120 {
		t.Errorf("a: %+v", a)
	}
	if b.Final != "read" || b.SentAt.Unix() != 200 || b.DeliveredAt.Unix() != 200 {
		t.Errorf("b: %+v", b)
	}
	if c.Final != "failed" || *c.ErrorCode != 131026 || c.ErrorTitle != "Undeliverable" || c.SentAt.Unix() != 300 || c.FailedAt.Unix() != 310 {
		t.Errorf("c: %+v", c)
	}
	if d.Final != "delivered" {
		t.Errorf("d: %+v", d)
	}
}
