// Package marker is the host-side reasoning marker format,
// <!--AGENT_REASONING:{status}:{elapsedSeconds}:{stepsJSON}-->: serializing
// it so that a TypeScript host's regular expression always finds it whole,
// parsing it the way that host does, and stripping markers (ours and the
// legacy tool-call ones) from text.
//
// It is a leaf package: the reasoning block uses it to render, the service to
// strip markers from host history before a model sees it.
package marker
