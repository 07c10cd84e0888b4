LOAD SILENT <http://src> INTO GRAPH <http://g> ; LOAD <http://src2> ;
CLEAR SILENT DEFAULT ; CLEAR NAMED ; CLEAR ALL ; CLEAR GRAPH <http://g> ;
DROP GRAPH <http://g> ; DROP SILENT ALL ; CREATE SILENT GRAPH <http://g> ;
ADD <http://a> TO DEFAULT ; MOVE SILENT DEFAULT TO GRAPH <http://b> ; COPY <http://a> TO <http://b> ;
