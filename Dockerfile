# ceph-rook plugin image: two static Go binaries on a small base. The plugin
# runs ceph-rook-helm, beside it, to install the Rook chart through the
# Helm SDK (no helm CLI is needed); keeping Helm in that short-lived helper
# keeps it out of the long-running plugin's memory.
# Base images are pinned by digest (the tag beside it says what it is, the
# digest decides which image it is): a re-pushed tag cannot change what is
# built. Bump both deliberately, in a reviewed commit (docs/security.md).
FROM golang:1.26.5@sha256:3aff6657219a4d9c14e27fb1d8976c49c29fddb70ba835014f477e1c70636647 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/ceph-rook . && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/ceph-rook-helm ./cmd/ceph-rook-helm

FROM gcr.io/distroless/static-debian12:nonroot@sha256:d093aa3e30dbadd3efe1310db061a14da60299baff8450a17fe0ccc514a16639
WORKDIR /app
COPY --from=build /out/ceph-rook /app/ceph-rook
COPY --from=build /out/ceph-rook-helm /app/ceph-rook-helm
COPY definition.yaml /app/definition.yaml
# distroless's "nonroot", by number: a kubelet can verify runAsNonRoot only
# for a numeric user (internal/plugincontroller.PluginUser says the same).
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/app/ceph-rook"]
