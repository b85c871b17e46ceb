# ceph-rook plugin image: two static Go binaries on a small base. The plugin
# runs ceph-rook-helm, beside it, to install the Rook chart through the
# Helm SDK (no helm CLI is needed); keeping Helm in that short-lived helper
# keeps it out of the long-running plugin's memory.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/ceph-rook . && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/ceph-rook-helm ./cmd/ceph-rook-helm

FROM gcr.io/distroless/static-debian12:nonroot
WORKDIR /app
COPY --from=build /out/ceph-rook /app/ceph-rook
COPY --from=build /out/ceph-rook-helm /app/ceph-rook-helm
COPY definition.yaml /app/definition.yaml
# distroless's "nonroot", by number: a kubelet can verify runAsNonRoot only
# for a numeric user (internal/plugincontroller.PluginUser says the same).
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/app/ceph-rook"]
