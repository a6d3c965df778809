#!/usr/bin/env bash
# webhook-cert.sh - the admission webhook's certificate for clusters without
# cert-manager: a CA and a serving certificate for the webhook Service, made
# with openssl, stored in the Secret the operator mounts, and the CA written
# into both webhook configurations' caBundle.
#
# The CA's key is thrown away once the certificate is signed: nobody can
# sign another certificate the API server would trust for the webhook. To
# renew (before --days run out), run this again and restart the operator
# (it reads the certificate at start):
#
#   scripts/webhook-cert.sh
#   kubectl -n trainyard-system rollout restart deployment/trainyard-operator
#
# Keys are made in a private temporary directory (0700), removed on exit,
# and reach the cluster only through kubectl's standard input.
set -euo pipefail

NAMESPACE=trainyard-system
SERVICE=trainyard-webhook
SECRET=trainyard-webhook-cert
WEBHOOK=trainyard
DAYS=365
PATCH=1
KUBECTL=${KUBECTL:-kubectl}

usage() {
    cat <<EOF
usage: $0 [--namespace NS] [--service NAME] [--secret NAME] [--webhook NAME]
          [--days N] [--skip-patch]
Makes a CA and a certificate for the Service NAME.NS.svc (default
$SERVICE.$NAMESPACE.svc), stores tls.crt, tls.key and ca.crt in the
kubernetes.io/tls Secret NS/$SECRET (created or replaced), and sets the
caBundle of every webhook of the MutatingWebhookConfiguration and
ValidatingWebhookConfiguration named $WEBHOOK (--skip-patch: not).
Uses kubectl's current context (\$KUBECTL overrides the command).
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
    --namespace) NAMESPACE=$2; shift 2 ;;
    --service) SERVICE=$2; shift 2 ;;
    --secret) SECRET=$2; shift 2 ;;
    --webhook) WEBHOOK=$2; shift 2 ;;
    --days) DAYS=$2; shift 2 ;;
    --skip-patch) PATCH=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
case "$DAYS" in ''|*[!0-9]*) echo "error: --days must be a number of days" >&2; exit 2 ;; esac

command -v openssl >/dev/null || { echo "error: openssl is not installed" >&2; exit 1; }

WORK=$(mktemp -d)
chmod 700 "$WORK"
trap 'rm -rf "$WORK"' EXIT
umask 077

# The CA: its own key, used once below and then removed with $WORK.
openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$WORK/ca.key" -out "$WORK/ca.crt" -days "$DAYS" \
    -subj "/CN=$SERVICE.$NAMESPACE webhook CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

# The serving certificate: the names the API server dials (service.ns.svc).
cat >"$WORK/ext.cnf" <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:$SERVICE.$NAMESPACE.svc,DNS:$SERVICE.$NAMESPACE.svc.cluster.local,DNS:$SERVICE.$NAMESPACE,DNS:$SERVICE
EOF
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$WORK/tls.key" -out "$WORK/tls.csr" -subj "/CN=$SERVICE.$NAMESPACE.svc" 2>/dev/null
openssl x509 -req -in "$WORK/tls.csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" \
    -CAcreateserial -out "$WORK/tls.crt" -days "$DAYS" -extfile "$WORK/ext.cnf" 2>/dev/null
rm -f "$WORK/ca.key"
openssl verify -CAfile "$WORK/ca.crt" "$WORK/tls.crt" >/dev/null

"$KUBECTL" create secret generic "$SECRET" --namespace "$NAMESPACE" --type kubernetes.io/tls \
    --from-file=tls.crt="$WORK/tls.crt" --from-file=tls.key="$WORK/tls.key" \
    --from-file=ca.crt="$WORK/ca.crt" --dry-run=client -o yaml |
    "$KUBECTL" apply -f -

[ "$PATCH" = 1 ] || exit 0

CA_BUNDLE=$(base64 <"$WORK/ca.crt" | tr -d '\n')
for kind in mutatingwebhookconfiguration validatingwebhookconfiguration; do
    n=$("$KUBECTL" get "$kind" "$WEBHOOK" -o jsonpath='{range .webhooks[*]}{.name}{"\n"}{end}' | grep -c .)
    ops=""
    for ((i = 0; i < n; i++)); do
        ops="$ops${ops:+,}{\"op\":\"add\",\"path\":\"/webhooks/$i/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"}"
    done
    [ -n "$ops" ] && "$KUBECTL" patch "$kind" "$WEBHOOK" --type=json -p "[$ops]"
done
