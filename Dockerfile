# One image for every Wharf process; the compose file picks the command.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/...

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home /data wharf \
 && mkdir -p /data/storage && chown -R wharf /data
COPY --from=build /out/ /usr/local/bin/
USER wharf
ENV STORAGE_DIR=/data/storage HTTP_ADDR=:8080
EXPOSE 8080
CMD ["api"]
