// Command podsecurity evaluates pod templates against the Kubernetes Pod Security Standards with the
// upstream admission library (k8s.io/pod-security-admission/policy, the checks the API server's
// PodSecurity admission runs). It reads a JSON array of
// {"name", "level", "version", "metadata", "spec"} from stdin and writes one JSON array of
// {"name", "allowed", "reasons"} to stdout.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

type template struct {
	Name     string            `json:"name"`
	Level    string            `json:"level"`
	Version  string            `json:"version"`
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     corev1.PodSpec    `json:"spec"`
}

type verdict struct {
	Name    string   `json:"name"`
	Allowed bool     `json:"allowed"`
	Reasons []string `json:"reasons"`
}

func main() {
	var templates []template
	decoder := json.NewDecoder(os.Stdin)
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&templates); err != nil {
		fail("reading templates: %v", err)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		fail("building the evaluator: %v", err)
	}
	verdicts := make([]verdict, 0, len(templates))
	for _, t := range templates {
		level, err := api.ParseLevel(t.Level)
		if err != nil {
			fail("%s: %v", t.Name, err)
		}
		version, err := api.ParseVersion(t.Version)
		if err != nil {
			fail("%s: %v", t.Name, err)
		}
		result := policy.AggregateCheckResults(
			evaluator.EvaluatePod(api.LevelVersion{Level: level, Version: version}, &t.Metadata, &t.Spec),
		)
		reasons := make([]string, 0, len(result.ForbiddenReasons))
		for i, reason := range result.ForbiddenReasons {
			if detail := result.ForbiddenDetails[i]; detail != "" {
				reason += " (" + detail + ")"
			}
			reasons = append(reasons, reason)
		}
		verdicts = append(verdicts, verdict{Name: t.Name, Allowed: result.Allowed, Reasons: reasons})
	}
	if err := json.NewEncoder(os.Stdout).Encode(verdicts); err != nil {
		fail("writing verdicts: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "podsecurity: "+format+"\n", args...)
	os.Exit(2)
}
