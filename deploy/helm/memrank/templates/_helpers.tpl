{{/* The chart's name, or nameOverride. */}}
{{- define "memrank.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' name: fullnameOverride, else the release name (with the chart's name added unless it holds it). */}}
{{- define "memrank.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "memrank.selectorLabels" -}}
app.kubernetes.io/name: {{ include "memrank.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "memrank.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "memrank.selectorLabels" . }}
app.kubernetes.io/version: {{ default .Chart.AppVersion .Values.image.tag | quote }}
app.kubernetes.io/component: ranker
app.kubernetes.io/part-of: memrank
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "memrank.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "memrank.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* repository:tag, or repository@digest when a digest is given. */}}
{{- define "memrank.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* memrank's environment variable for a configuration key path: MEMRANK_ and the path upper-cased, "__" between parts (upstream.api_key -> MEMRANK_UPSTREAM__API_KEY). */}}
{{- define "memrank.envName" -}}
{{- printf "MEMRANK_%s" (. | upper | replace "." "__") -}}
{{- end -}}

{{/* Where the pod mounts its files. */}}
{{- define "memrank.configDir" -}}/etc/memrank/config{{- end -}}
{{- define "memrank.stateDir" -}}/var/lib/memrank{{- end -}}
{{- define "memrank.tlsDir" -}}/etc/memrank/tls{{- end -}}
{{- define "memrank.upstreamCADir" -}}/etc/memrank/upstream-ca{{- end -}}
{{- define "memrank.jwtKeysDir" -}}/etc/memrank/jwt{{- end -}}

{{/* The shutdown budget: the preStop sleep, memrank's drain, then its grace
twice (each part of memrank's shutdown gets its own grace, in turn: the
servers finish calls stuck on a hung Qdrant, then the final access-count
flush retries, and only then is the spool written), and a margin. */}}
{{- define "memrank.terminationGracePeriod" -}}
{{- $need := add .Values.lifecycle.preStopSleepSeconds .Values.shutdown.drainSeconds (mul 2 .Values.shutdown.graceSeconds) .Values.shutdown.marginSeconds -}}
{{- if .Values.terminationGracePeriodSeconds -}}
{{- if lt (int .Values.terminationGracePeriodSeconds) (int $need) -}}
{{- fail (printf "terminationGracePeriodSeconds %v is shorter than lifecycle.preStopSleepSeconds + shutdown.drainSeconds + 2 x shutdown.graceSeconds + shutdown.marginSeconds = %v: Kubernetes would kill memrank before its final access-count flush" .Values.terminationGracePeriodSeconds $need) -}}
{{- end -}}
{{- .Values.terminationGracePeriodSeconds -}}
{{- else -}}
{{- $need -}}
{{- end -}}
{{- end -}}

{{/* memrank's configuration file: what the chart sets from its values, with .Values.config merged over it. */}}
{{- define "memrank.config" -}}
{{- range $k := list "listen" "shutdown" "tenancy" -}}
{{- if hasKey $.Values.config $k -}}
{{- fail (printf "config.%s: set it with the chart's own values (ports, tls, shutdown, tenancy, secrets), which the probes, the grace period and the Secret references follow" $k) -}}
{{- end -}}
{{- end -}}
{{- range $section, $keys := dict "access" (list "spool_file") "upstream" (list "grpc" "rest" "tls" "api_key") "embedder" (list "api_key") "judge" (list "api_key") "store" (list "api_key" "read_only_api_key") -}}
{{- if hasKey $.Values.config $section -}}
{{- range $keys -}}
{{- if hasKey (index $.Values.config $section) . -}}
{{- fail (printf "config.%s.%s: the chart sets it (upstream.*, tls.*, the spool volume) or it is a secret (secrets.existingSecret, secrets.keys), never in the ConfigMap" $section .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .Values.tls.upstream.enabled (hasPrefix "http://" .Values.upstream.rest) -}}
{{- fail (printf "upstream.rest %q is plain http while tls.upstream.enabled is on: forwarded REST calls (and their api-key headers) would cross the network unencrypted; use https://" .Values.upstream.rest) -}}
{{- end -}}
{{- if and (not .Values.tenancy.key) (or .Values.tenancy.header .Values.tenancy.jwt.claim .Values.tenancy.jwt.publicKeysSecretName) -}}
{{- fail "tenancy: header or jwt is set but tenancy.key is empty: memrank would run with tenancy off and every caller would see every memory" -}}
{{- end -}}
{{- $listen := dict "http" (printf ":%v" .Values.ports.http) "grpc" (printf ":%v" .Values.ports.grpc) -}}
{{- if .Values.tls.listen.secretName -}}
{{- $_ := set $listen "tls" (dict "cert_file" (printf "%s/tls.crt" (include "memrank.tlsDir" .)) "key_file" (printf "%s/tls.key" (include "memrank.tlsDir" .))) -}}
{{- end -}}
{{- $hosts := list -}}
{{- if .Values.service.enabled -}}
{{- $svc := include "memrank.fullname" . -}}
{{- $hosts = list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) -}}
{{- end -}}
{{- $hosts = concat $hosts .Values.allowedHosts -}}
{{- if has "*" .Values.allowedHosts -}}{{- $hosts = list "*" -}}{{- end -}}
{{- if $hosts -}}{{- $_ := set $listen "allowed_hosts" $hosts -}}{{- end -}}
{{- $upstream := dict "grpc" (required "upstream.grpc (Qdrant's gRPC address, e.g. qdrant:6334) is required" .Values.upstream.grpc) -}}
{{- if .Values.upstream.rest -}}{{- $_ := set $upstream "rest" .Values.upstream.rest -}}{{- end -}}
{{- if .Values.tls.upstream.enabled -}}
{{- $utls := dict "enabled" true -}}
{{- if .Values.tls.upstream.serverName -}}{{- $_ := set $utls "server_name" .Values.tls.upstream.serverName -}}{{- end -}}
{{- if .Values.tls.upstream.caSecretName -}}
{{- $_ := set $utls "ca_file" (printf "%s/ca.crt" (include "memrank.upstreamCADir" .)) -}}
{{- end -}}
{{- $_ := set $upstream "tls" $utls -}}
{{- end -}}
{{- $cfg := dict
  "listen" $listen
  "upstream" $upstream
  "shutdown" (dict "drain" (printf "%vs" .Values.shutdown.drainSeconds) "grace" (printf "%vs" .Values.shutdown.graceSeconds))
  "access" (dict "spool_file" (printf "%s/access.spool" (include "memrank.stateDir" .)))
  "telemetry" (dict "service_name" .Values.telemetry.serviceName "log_format" .Values.telemetry.logFormat "log_level" .Values.telemetry.logLevel)
-}}
{{- if .Values.telemetry.otlpEndpoint -}}{{- $_ := set $cfg.telemetry "otlp_endpoint" .Values.telemetry.otlpEndpoint -}}{{- end -}}
{{- if .Values.tenancy.key -}}
{{- $ten := dict "key" .Values.tenancy.key -}}
{{- if .Values.tenancy.header -}}{{- $_ := set $ten "header" .Values.tenancy.header -}}{{- end -}}
{{- if .Values.tenancy.jwt.claim -}}
{{- $jwt := dict "claim" .Values.tenancy.jwt.claim -}}
{{- if .Values.tenancy.jwt.issuer -}}{{- $_ := set $jwt "issuer" .Values.tenancy.jwt.issuer -}}{{- end -}}
{{- if .Values.tenancy.jwt.audience -}}{{- $_ := set $jwt "audience" .Values.tenancy.jwt.audience -}}{{- end -}}
{{- if .Values.tenancy.jwt.publicKeysSecretName -}}
{{- $_ := set $jwt "public_keys_file" (printf "%s/keys.pem" (include "memrank.jwtKeysDir" .)) -}}
{{- end -}}
{{- $_ := set $ten "jwt" $jwt -}}
{{- end -}}
{{- $_ := set $cfg "tenancy" $ten -}}
{{- end -}}
{{- toYaml (mergeOverwrite $cfg (deepCopy .Values.config)) -}}
{{- end -}}
