{{/*
The chart's name, or nameOverride.
*/}}
{{- define "@CHART@.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release-qualified name every resource name starts with: fullnameOverride, or the release name
when it already holds the chart's name, or RELEASE-CHART. At most 63 characters.
*/}}
{{- define "@CHART@.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The namespace the chart installs into: the release's.
*/}}
{{- define "@CHART@.namespaceName" -}}
{{- .Release.Namespace }}
{{- end }}

{{/*
FULLNAME-SUFFIX for a resource, shortened so that it fits in 63 characters.
Call with (dict "suffix" "controller-manager" "context" $).
*/}}
{{- define "@CHART@.resourceName" -}}
{{- $fullname := include "@CHART@.fullname" .context }}
{{- $room := sub 62 (len .suffix) | int }}
{{- if gt (len $fullname) $room }}
{{- printf "%s-%s" (trunc $room $fullname | trimSuffix "-") .suffix | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" $fullname .suffix | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
The manager's ServiceAccount: the account the chart creates, or, with serviceAccount.enabled=false,
the existing account serviceAccount.name names (which must then be set; "default" is the namespace's
own account).
*/}}
{{- define "@CHART@.serviceAccountName" -}}
{{- if .Values.serviceAccount.enabled }}
{{- include "@CHART@.resourceName" (dict "suffix" "controller-manager" "context" .) }}
{{- else }}
{{- required "serviceAccount.enabled=false needs serviceAccount.name: the existing ServiceAccount the manager runs as (\"default\" for the namespace's own)" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
