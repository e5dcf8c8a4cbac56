package dataops

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkCheckContacts10k measures the check phase of a 10,000-row
// contacts import (the file of bench.BenchmarkImportContacts10k), which
// runs in the worker before the import's transaction.
func BenchmarkCheckContacts10k(b *testing.B) {
	var file bytes.Buffer
	file.WriteString("phone_number,name,tags\n")
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&file, "+155600%05d,Contact %d,\"customer, batch%d\"\n", i, i, i%10)
	}
	t, _ := tableOf("contacts")
	d := &directory{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := parseCSV(file.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		p, err := t.planImport(f.header, nil)
		if err != nil {
			b.Fatal(err)
		}
		if c := checkContacts(f, p, d, func(int) {}); len(c.contacts) != 10000 {
			b.Fatal(c.errors, c.msgs.list)
		}
	}
}
