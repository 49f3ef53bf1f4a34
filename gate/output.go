package gate

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/report"
)

// WriteText writes the result as a table, one row per stage, then each
// stage's error and its first ten failures, then the verdict.
func (r *Result) WriteText(w io.Writer) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\titems\tfailures\tseconds\tresult")
	for _, st := range r.Stages {
		res := "holds"
		if st.Failures() > 0 {
			res = "FAILS"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%s\n", st.Name, len(st.Items), st.Failures(), st.Seconds, res)
	}
	tw.Flush()
	for _, st := range r.Stages {
		if st.Err != "" {
			fmt.Fprintf(&b, "\n%s: %s\n", st.Name, st.Err)
		}
		shown := 0
		for _, it := range st.Items {
			if !it.Holds && shown < 10 {
				fmt.Fprintf(&b, "\n%s: %s: %s\n", st.Name, it.Name, it.Failure)
				shown++
			}
		}
	}
	if r.Holds {
		fmt.Fprintf(&b, "\ngate holds: every obligation checked, certificates in %s verified\n", r.Out)
	} else {
		fmt.Fprintf(&b, "\ngate FAILS\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteJSON writes the result as a tlcheck.gate.v1 document.
func (r *Result) WriteJSON(w io.Writer) error {
	d := jsonout.GateDoc{Header: jsonout.NewHeader(jsonout.KindGate, jsonout.Seed(r.Seed), nil),
		Cases: r.Cases, Graphs: r.Graphs, CertCases: r.CertCases, Certificates: r.Out, Stages: []jsonout.GateStage{}, Holds: r.Holds}
	for _, st := range r.Stages {
		js := jsonout.GateStage{Stage: st.Name, Seconds: st.Seconds, Error: st.Err, Items: make([]jsonout.GateItem, len(st.Items)), Failures: st.Failures()}
		for i, it := range st.Items {
			js.Items[i] = it.GateItem
		}
		d.Stages = append(d.Stages, js)
		d.Failures += js.Failures
	}
	return jsonout.Write(w, d)
}

// WriteReport writes the Markdown summary and the picture of the
// refinement ratios (see internal/report) to the directory dir.
func (r *Result) WriteReport(dir string) error {
	d := &report.Data{Tool: r.Tool, RegistryHash: r.RegistryHash, Certificates: r.Out, Seed: r.Seed, Holds: r.Holds}
	for _, st := range r.Stages {
		d.Stages = append(d.Stages, report.Stage{Name: st.Name, Items: len(st.Items), Failures: st.Failures(), Seconds: st.Seconds})
		d.Refinements = append(d.Refinements, st.Refinements...)
		if st.Err != "" {
			d.Failures = append(d.Failures, st.Name+": "+st.Err)
		}
		for _, it := range st.Items {
			if !it.Holds {
				d.Failures = append(d.Failures, st.Name+": "+it.Name+": "+it.Failure)
			}
		}
	}
	return report.Write(dir, d)
}

// JUnit XML, the subset CI systems read (the attributes of the Ant
// JUnit schema that Jenkins, GitLab and GitHub reporters consume): one
// testsuite per stage, one testcase per item — per op × obligation in
// the check stage — each with its time in seconds.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Time    string       `xml:"time,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Tests int         `xml:"tests,attr"`
	Fails int         `xml:"failures,attr"`
	Time  string      `xml:"time,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// junitTime spells seconds as JUnit's xs:decimal, to the millisecond.
func junitTime(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// WriteJUnit writes the result as a JUnit XML report. A check item is
// named by its obligation under the classname tlcheck.check.OP, so each
// primitive groups its obligations; a stage's error is one more failing
// test case named after the stage.
func (r *Result) WriteJUnit(w io.Writer) error {
	js := junitSuites{Name: "tlcheck gate"}
	total := 0.0
	for _, st := range r.Stages {
		total += st.Seconds
		s := junitSuite{Name: "tlcheck." + st.Name, Time: junitTime(st.Seconds)}
		items := st.Items
		if st.Err != "" {
			items = append(items, Item{GateItem: jsonout.GateItem{Name: st.Name, Failure: st.Err}})
		}
		for _, it := range items {
			s.Cases = append(s.Cases, junitCaseOf(st.Name, it))
			s.Tests++
			if !it.Holds {
				s.Fails++
			}
		}
		js.Tests += s.Tests
		js.Fails += s.Fails
		js.Suites = append(js.Suites, s)
	}
	js.Time = junitTime(total)
	data, err := xml.MarshalIndent(js, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append([]byte(xml.Header), append(data, '\n')...))
	return err
}

// junitCaseOf is the test case of an item of the stage called stage.
func junitCaseOf(stage string, it Item) junitCase {
	class, name := "tlcheck."+stage, it.Name
	if it.Class != "" {
		class += "." + it.Class
		name = strings.TrimPrefix(name, it.Class+"/")
	}
	c := junitCase{Name: name, Classname: class, Time: junitTime(it.Seconds), SystemOut: it.Detail}
	if !it.Holds {
		msg := it.Failure
		if i := strings.IndexByte(msg, ';'); i > 0 && i < 200 {
			msg = msg[:i]
		}
		c.Failure = &junitFailure{Message: msg, Text: it.Failure}
	}
	return c
}
