-- What the Debezium MariaDB connector needs, for the user docker-compose.yml creates
-- (scripts/mariadb.sh grants the same on this machine).
GRANT SELECT, RELOAD, SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'cdc'@'%';
