# ceph-rook plugin image: a static Go binary on a small base. The Rook chart
# is installed through the Helm SDK, so no helm CLI is needed.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/ceph-rook .

FROM gcr.io/distroless/static-debian12:nonroot
WORKDIR /app
COPY --from=build /out/ceph-rook /app/ceph-rook
COPY definition.yaml /app/definition.yaml
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/app/ceph-rook"]
