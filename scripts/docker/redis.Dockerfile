# Redis 7 from Debian.
FROM msp-base/debian:bookworm
RUN apt-get update && apt-get install -y redis-server && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
USER redis
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no"]
